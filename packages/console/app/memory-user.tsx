import { when } from "./api";
import type { Chain, MemoryScope } from "./memory-api";

const agentName = (agentId: string) => agentId || "(no agent)";

/** Each agent the user talks to: its sessions and the STM window, newest first. */
export function MemoryScopes(props: {
  scopes: MemoryScope[];
  onForget: (agentId: string) => void;
}) {
  if (props.scopes.length === 0) return <p class="note">No sessions for this user.</p>;
  return (
    <div class="cards">
      {props.scopes.map((scope) => (
        <article key={scope.agent_id} class="card" data-scope={scope.agent_id}>
          <h4>Agent {agentName(scope.agent_id)}</h4>
          <button type="button" class="danger" onClick={() => props.onForget(scope.agent_id)}>
            Forget this agent's memory
          </button>
          <details>
            <summary>
              {scope.sessions.length} session{scope.sessions.length === 1 ? "" : "s"}
            </summary>
            <ul class="sessions">
              {scope.sessions.map((s) => (
                <li key={s.id}>
                  <span class="mono">{s.id}</span> <span class="note">{when(s.created_at)}</span>
                </li>
              ))}
            </ul>
          </details>
          <h5>STM window ({scope.stm.length} events, newest first)</h5>
          <ol class="stm">
            {scope.stm.map((event) => (
              <li key={event.id} class={`stm-${event.role}`}>
                <span class="note">
                  {when(event.timestamp)} · {event.role} {event.type}
                </span>
                <div class="content">{event.content}</div>
              </li>
            ))}
          </ol>
        </article>
      ))}
    </div>
  );
}

/** The dialogue chains, hottest detail one click away: each expands to the turns it came from. */
export function MemoryChains(props: { chains: Chain[] }) {
  if (props.chains.length === 0) return <p class="note">No dialogue chains yet.</p>;
  return (
    <div class="chains">
      {props.chains.map((chain) => (
        <details key={chain.id} class="chain" data-chain={chain.id}>
          <summary>
            <span class="chain-topic">{chain.topic || "(no topic)"}</span>{" "}
            <span class={`badge badge-${chain.status}`}>{chain.status}</span>{" "}
            <span class="note">
              agent {agentName(chain.agent_id)} · {when(chain.last_event_at)}
            </span>
            <span class="heat">
              heat <meter min={0} max={1} low={0.1} high={0.3} value={chain.heat} />{" "}
              {chain.heat.toFixed(2)}
            </span>
          </summary>
          <p class="content">{chain.summary}</p>
          <h5>Turns it came from</h5>
          <ol class="turns">
            {chain.turns.map((turn) => (
              <li key={turn.id} data-event={turn.id}>
                <span class="note">
                  {when(turn.at)} · {turn.role}
                </span>
                <div class="content">{turn.content}</div>
              </li>
            ))}
          </ol>
        </details>
      ))}
    </div>
  );
}
