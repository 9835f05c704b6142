import type { Connection } from "@atrium/sdk";
import { useEffect, useState } from "preact/hooks";
import { callApi } from "./api";
import { PageMessages } from "./page-messages";

// Connections a human must act on come first, then broken ones, then the rest.
const statusOrder: Record<string, number> = { attention: 0, failed: 1, active: 2, revoked: 3 };

export function sortAttentionFirst(connections: Connection[]): Connection[] {
  return [...connections].sort(
    (a, b) =>
      (statusOrder[a.status] ?? 9) - (statusOrder[b.status] ?? 9) || a.id.localeCompare(b.id),
  );
}

function when(timestamp: string | undefined): string {
  return timestamp ? new Date(timestamp).toLocaleString() : "—";
}

export function CredentialsPage() {
  const [workspace, setWorkspace] = useState("");
  const [connections, setConnections] = useState<Connection[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();

  async function load(workspaceId: string) {
    setError(undefined);
    try {
      const query = workspaceId ? `?workspace_id=${encodeURIComponent(workspaceId)}` : "";
      const result = await callApi<{ connections: Connection[] }>("GET", `/v1/connections${query}`);
      setConnections(sortAttentionFirst(result.connections ?? []));
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  useEffect(() => {
    void load("");
  }, []);

  async function act(connection: Connection, action: "refresh" | "revoke") {
    const question =
      action === "revoke"
        ? `Revoke ${connection.provider_name} connection ${connection.id}? The credential is destroyed.`
        : `Refresh ${connection.provider_name} connection ${connection.id} now?`;
    if (!window.confirm(question)) return;
    setError(undefined);
    try {
      const workspaceQuery = `workspace_id=${encodeURIComponent(connection.workspace_id)}`;
      if (action === "revoke") {
        await callApi(
          "DELETE",
          `/v1/connections/${encodeURIComponent(connection.id)}?${workspaceQuery}&reason=console`,
        );
      } else {
        await callApi("POST", `/v1/refresh/${encodeURIComponent(connection.id)}`, {
          workspace_id: connection.workspace_id,
        });
      }
      // The list is reloaded before the notice, so the notice describes what is on screen.
      await load(workspace);
      setNotice(`${action === "revoke" ? "Revoked" : "Refreshed"} ${connection.id}`);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  return (
    <section aria-labelledby="credentials-title">
      <h2 id="credentials-title">Connections</h2>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          void load(workspace.trim());
        }}
      >
        <label>
          Workspace
          <input
            name="workspace"
            value={workspace}
            placeholder="all workspaces"
            onInput={(event) => setWorkspace(event.currentTarget.value)}
          />
        </label>
        <button type="submit">Show</button>
      </form>
      <PageMessages error={error} notice={notice} />
      {connections && connections.length === 0 && <p class="note">No connections.</p>}
      {connections && connections.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Status</th>
                <th>Provider</th>
                <th>Workspace</th>
                <th>Subject</th>
                <th>Health</th>
                <th>Expires</th>
                <th>Last refresh</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {connections.map((connection) => (
                <tr
                  key={connection.id}
                  data-connection={connection.id}
                  class={connection.status === "attention" ? "attention" : undefined}
                >
                  <td class="status">{connection.status}</td>
                  <td>{connection.provider_name || connection.provider_id}</td>
                  <td>{connection.workspace_id}</td>
                  <td>{connection.subject}</td>
                  <td>{connection.health_status}</td>
                  <td>{when(connection.expires_at)}</td>
                  <td>{when(connection.last_refreshed_at)}</td>
                  <td>
                    {connection.status !== "revoked" && (
                      <div class="actions">
                        <button type="button" onClick={() => void act(connection, "refresh")}>
                          Refresh
                        </button>
                        <button
                          type="button"
                          class="danger"
                          onClick={() => void act(connection, "revoke")}
                        >
                          Revoke
                        </button>
                      </div>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
