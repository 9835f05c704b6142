import { useEffect, useState } from "preact/hooks";
import { callApi } from "./api";
import { PageMessages } from "./page-messages";

interface Provider {
  id: string;
  name: string;
  auth_type: string;
  client_id?: string;
  client_secret_fingerprint?: string;
  api_base_url?: string;
  category?: string;
  description?: string;
}

/** The registered providers: never a secret, only its fingerprint (to tell two secrets apart). */
export function ProvidersPage() {
  const [providers, setProviders] = useState<Provider[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    callApi<{ providers?: Provider[] }>("GET", "/v1/operator/providers")
      .then((answer) => setProviders(answer.providers ?? []))
      .catch((failure: Error) => setError(failure.message));
  }, []);
  return (
    <section aria-labelledby="providers-title">
      <h2 id="providers-title">Providers</h2>
      <PageMessages error={error} />
      {providers && providers.length === 0 && <p class="note">No providers registered.</p>}
      {providers && providers.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Auth type</th>
                <th>Client id</th>
                <th>Secret fingerprint</th>
                <th>API base URL</th>
                <th>Category</th>
              </tr>
            </thead>
            <tbody>
              {providers.map((provider) => (
                <tr key={provider.id} data-provider={provider.id}>
                  <td title={provider.description}>{provider.name}</td>
                  <td>{provider.auth_type}</td>
                  <td>{provider.client_id || "—"}</td>
                  <td class="mono">{provider.client_secret_fingerprint || "none"}</td>
                  <td>{provider.api_base_url || "—"}</td>
                  <td>{provider.category || "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
