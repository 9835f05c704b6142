import { useEffect, useState } from "preact/hooks";
import { callApi, queryString, when } from "./api";
import { PageMessages } from "./page-messages";

interface Webhook {
  id: string;
  name: string;
  url: string;
  event_types?: string[];
  enabled?: boolean;
  secret_fingerprint?: string;
}

interface Attempt {
  attempt: number;
  status_code?: number;
  error?: string;
  duration_ms?: number;
  attempted_at?: string;
}

interface Delivery {
  id: string;
  event_type: string;
  status: string;
  attempt_count?: number;
  next_attempt_at?: string;
  last_error?: string;
  created_at?: string;
  delivered_at?: string;
  attempts?: Attempt[];
}

/**
 * One delivery and each attempt at it: when, the receiver's status or the error, how long. A
 * failed one (its retry window ran out) can be sent again.
 */
function DeliveryRow(props: { delivery: Delivery; onRedeliver: (delivery: Delivery) => void }) {
  const { delivery, onRedeliver } = props;
  const [open, setOpen] = useState(false);
  return (
    <>
      <tr
        data-delivery={delivery.id}
        class={delivery.status === "failed" ? "attention" : undefined}
      >
        <td>{when(delivery.created_at)}</td>
        <td>{delivery.event_type}</td>
        <td class="status">{delivery.status}</td>
        <td>
          <button type="button" class="link" onClick={() => setOpen(!open)}>
            {delivery.attempt_count ?? 0} attempt{delivery.attempt_count === 1 ? "" : "s"}
          </button>
        </td>
        <td>
          {delivery.status === "pending"
            ? `next ${when(delivery.next_attempt_at)}`
            : when(delivery.delivered_at)}
        </td>
        <td>{delivery.last_error || "—"}</td>
        <td>
          {delivery.status === "failed" && (
            <button type="button" onClick={() => onRedeliver(delivery)}>
              Redeliver
            </button>
          )}
        </td>
      </tr>
      {open &&
        (delivery.attempts ?? []).map((attempt) => (
          <tr key={attempt.attempt} class="sub">
            <td>{when(attempt.attempted_at)}</td>
            <td colSpan={2}>attempt {attempt.attempt}</td>
            <td>{attempt.status_code ? `HTTP ${attempt.status_code}` : "no response"}</td>
            <td>{attempt.duration_ms ?? "?"} ms</td>
            <td colSpan={2}>{attempt.error || "—"}</td>
          </tr>
        ))}
    </>
  );
}

/** Webhook subscriptions (secrets shown only as fingerprints) and their delivery attempts. */
export function WebhooksPage() {
  const [webhooks, setWebhooks] = useState<Webhook[] | undefined>();
  const [selected, setSelected] = useState<Webhook | undefined>();
  const [status, setStatus] = useState("");
  const [deliveries, setDeliveries] = useState<Delivery[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();

  useEffect(() => {
    callApi<{ webhooks?: Webhook[] }>("GET", "/v1/webhooks")
      .then((answer) => setWebhooks(answer.webhooks ?? []))
      .catch((failure: Error) => setError(failure.message));
  }, []);

  const loadDeliveries = async (webhook: Webhook) => {
    const answer = await callApi<{ deliveries?: Delivery[] }>(
      "GET",
      `/v1/webhooks/${encodeURIComponent(webhook.id)}/deliveries${queryString({ status, limit: 100 })}`,
    );
    setDeliveries(answer.deliveries ?? []);
  };

  useEffect(() => {
    setDeliveries(undefined);
    setNotice(undefined);
    if (!selected) return;
    loadDeliveries(selected).catch((failure: Error) => setError(failure.message));
  }, [selected, status]);

  async function redeliver(webhook: Webhook, delivery: Delivery) {
    if (!window.confirm(`Send ${delivery.event_type} delivery ${delivery.id} again?`)) return;
    setError(undefined);
    try {
      await callApi(
        "POST",
        `/v1/webhooks/${encodeURIComponent(webhook.id)}/deliveries/${encodeURIComponent(delivery.id)}/redeliver`,
        {},
      );
      // Reloaded before the notice, so the notice describes what is on screen.
      await loadDeliveries(webhook);
      setNotice(`Delivery ${delivery.id} is pending again`);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  return (
    <section aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">Webhooks</h2>
      <PageMessages error={error} notice={notice} />
      {webhooks && webhooks.length === 0 && <p class="note">No subscriptions.</p>}
      {webhooks && webhooks.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>URL</th>
                <th>Events</th>
                <th>Enabled</th>
                <th>Secret fingerprint</th>
              </tr>
            </thead>
            <tbody>
              {webhooks.map((webhook) => (
                <tr key={webhook.id} data-webhook={webhook.id}>
                  <td>
                    <button type="button" class="link" onClick={() => setSelected(webhook)}>
                      {webhook.name}
                    </button>
                  </td>
                  <td class="mono">{webhook.url}</td>
                  <td>{(webhook.event_types ?? []).join(", ")}</td>
                  <td>{webhook.enabled ? "yes" : "no"}</td>
                  <td class="mono">{webhook.secret_fingerprint}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {selected && (
        <>
          <h3>Deliveries to {selected.name}</h3>
          <form class="inline">
            <label>
              Status
              <select
                name="status"
                value={status}
                onChange={(event) => setStatus(event.currentTarget.value)}
              >
                <option value="">all</option>
                <option value="pending">pending</option>
                <option value="delivered">delivered</option>
                <option value="failed">failed</option>
              </select>
            </label>
          </form>
          {deliveries && deliveries.length === 0 && <p class="note">No deliveries.</p>}
          {deliveries && deliveries.length > 0 && (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Event at</th>
                    <th>Event</th>
                    <th>Status</th>
                    <th>Attempts</th>
                    <th>Delivered / next</th>
                    <th>Last error</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {deliveries.map((delivery) => (
                    <DeliveryRow
                      key={delivery.id}
                      delivery={delivery}
                      onRedeliver={(chosen) => void redeliver(selected, chosen)}
                    />
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
