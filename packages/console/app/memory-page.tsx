import { useEffect, useState } from "preact/hooks";
import { when } from "./api";
import {
  type MemoryGraph,
  type MemoryOwner,
  type MemoryUser,
  memoryApi,
  type UserMemory,
} from "./memory-api";
import { MemoryGraphView } from "./memory-graph";
import { MemorySearch } from "./memory-search";
import { MemoryChains, MemoryScopes } from "./memory-user";
import { PageMessages } from "./page-messages";

/** Everything memory holds about one user: scopes, STM, chains, the graph and search. */
function UserMemoryView(props: { owner: MemoryOwner }) {
  const { owner } = props;
  const [memory, setMemory] = useState<UserMemory | undefined>();
  const [graph, setGraph] = useState<MemoryGraph | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [loads, setLoads] = useState(0);

  /** Erases the user (no agent given) or one of their agents, after the operator confirms. */
  async function forget(agentId?: string) {
    const what =
      agentId === undefined
        ? `everything memory holds about user ${owner.userId}, with every agent`
        : `user ${owner.userId}'s memory with agent ${agentId || "(no agent)"}`;
    if (!window.confirm(`Erase ${what}? This cannot be undone.`)) return;
    setError(undefined);
    try {
      const erased = await memoryApi.forget(owner, agentId);
      setNotice(
        `Erased ${erased.events_erased} events, ${erased.chains_erased} chains and ` +
          `${erased.entities_erased} graph entities (erasure ${erased.erasure_id}).`,
      );
      setLoads((n) => n + 1);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  useEffect(() => {
    let current = true;
    Promise.all([memoryApi.user(owner), memoryApi.graph(owner)]).then(
      ([user, userGraph]) => {
        if (!current) return;
        setMemory(user);
        setGraph(userGraph);
      },
      (failure) => current && setError((failure as Error).message),
    );
    return () => {
      current = false;
    };
  }, [owner, loads]);

  return (
    <section class="memory-user" aria-labelledby="memory-user-title">
      <h3 id="memory-user-title">
        User <span class="mono">{owner.userId}</span> in tenant{" "}
        <span class="mono">{owner.tenantId}</span>
      </h3>
      <PageMessages error={error} notice={notice} />
      <button type="button" class="danger" onClick={() => void forget()}>
        Forget this user
      </button>
      {!memory && !error && <p class="note">Loading…</p>}
      {memory && (
        <>
          <h4>Scopes, sessions and short-term memory</h4>
          <MemoryScopes scopes={memory.scopes} onForget={(agentId) => void forget(agentId)} />
          <h4>Dialogue chains</h4>
          <MemoryChains chains={memory.chains} />
        </>
      )}
      {graph && (
        <>
          <h4>Long-term graph</h4>
          <MemoryGraphView owner={owner} graph={graph} />
        </>
      )}
      <h4>Search</h4>
      <MemorySearch owner={owner} />
    </section>
  );
}

/** The Memory page: find a tenant's users, open one, see what memory holds about them and why. */
export function MemoryPage() {
  const [tenant, setTenant] = useState("");
  const [user, setUser] = useState("");
  const [users, setUsers] = useState<MemoryUser[] | undefined>();
  const [owner, setOwner] = useState<MemoryOwner | undefined>();
  const [error, setError] = useState<string | undefined>();

  async function find() {
    const tenantId = tenant.trim();
    setError(undefined);
    if (user.trim()) setOwner({ tenantId, userId: user.trim() });
    try {
      setUsers((await memoryApi.users(tenantId)).users);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  return (
    <section aria-labelledby="memory-title">
      <h2 id="memory-title">Memory</h2>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          if (tenant.trim()) void find();
          else setError("Tenant is required");
        }}
      >
        <label>
          Tenant
          <input
            name="tenant"
            value={tenant}
            onInput={(event) => setTenant(event.currentTarget.value)}
          />
        </label>
        <label>
          User (optional)
          <input
            name="user"
            value={user}
            placeholder="open this user directly"
            onInput={(event) => setUser(event.currentTarget.value)}
          />
        </label>
        <button type="submit">Find</button>
      </form>
      <PageMessages error={error} />
      {users && users.length === 0 && <p class="note">No users in this tenant.</p>}
      {users && users.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>User</th>
                <th>Agents</th>
                <th>Sessions</th>
                <th>Last event</th>
              </tr>
            </thead>
            <tbody>
              {users.map((u) => (
                <tr
                  key={u.user_id}
                  data-user={u.user_id}
                  class={owner?.userId === u.user_id ? "selected" : undefined}
                >
                  <td>
                    <button
                      type="button"
                      class="link"
                      onClick={() => setOwner({ tenantId: tenant.trim(), userId: u.user_id })}
                    >
                      {u.user_id}
                    </button>
                  </td>
                  <td>{u.agents.map((a) => a || "(no agent)").join(", ")}</td>
                  <td>{u.sessions}</td>
                  <td>{when(u.last_event_at ?? undefined)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {owner && <UserMemoryView key={`${owner.tenantId}\0${owner.userId}`} owner={owner} />}
    </section>
  );
}
