import { useEffect, useState } from "preact/hooks";
import { callApi, queryString, when } from "./api";
import { PageMessages } from "./page-messages";

interface AuditEvent {
  id: string;
  event_type: string;
  resource_id?: string;
  caller_ip?: string;
  user_agent?: string;
  data?: Record<string, unknown>;
  created_at?: string;
}

interface Filters {
  event_type: string;
  resource_id: string;
  since: string;
  until: string;
}

const pageSize = 50;
const noFilters: Filters = { event_type: "", resource_id: "", since: "", until: "" };

/** The broker's audit log with the spec's filters (type, resource, time window) and paging. */
export function AuditPage() {
  const [draft, setDraft] = useState<Filters>(noFilters);
  const [filters, setFilters] = useState<Filters>(noFilters);
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<{ events: AuditEvent[]; total: number } | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    setError(undefined);
    const iso = (local: string) => (local ? new Date(local).toISOString() : undefined);
    callApi<{ events?: AuditEvent[]; total?: number }>(
      "GET",
      `/v1/operator/audit${queryString({
        event_type: filters.event_type.trim(),
        resource_id: filters.resource_id.trim(),
        since: iso(filters.since),
        until: iso(filters.until),
        limit: pageSize,
        offset,
      })}`,
    )
      .then((answer) => setPage({ events: answer.events ?? [], total: answer.total ?? 0 }))
      .catch((failure: Error) => setError(failure.message));
  }, [filters, offset]);

  const onInput = (name: keyof Filters) => (event: { currentTarget: HTMLInputElement }) =>
    setDraft({ ...draft, [name]: event.currentTarget.value });
  const textField = (name: keyof Filters, label: string) => (
    <label>
      {label}
      <input name={name} type="text" value={draft[name]} onInput={onInput(name)} />
    </label>
  );
  const timeField = (name: keyof Filters, label: string) => (
    <label>
      {label}
      <input name={name} type="datetime-local" value={draft[name]} onInput={onInput(name)} />
    </label>
  );

  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          setOffset(0);
          setFilters(draft);
        }}
      >
        {textField("event_type", "Event type")}
        {textField("resource_id", "Resource id")}
        {timeField("since", "After")}
        {timeField("until", "Before")}
        <button type="submit">Filter</button>
      </form>
      <PageMessages error={error} />
      {page && (
        <>
          <p class="note" role="status">
            {page.total === 0
              ? "No events."
              : `Events ${offset + 1}–${offset + page.events.length} of ${page.total}`}
          </p>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>When</th>
                  <th>Event</th>
                  <th>Resource</th>
                  <th>Caller</th>
                  <th>Details</th>
                </tr>
              </thead>
              <tbody>
                {page.events.map((event) => (
                  <tr key={event.id} data-audit={event.id}>
                    <td>{when(event.created_at)}</td>
                    <td>{event.event_type}</td>
                    <td class="mono">{event.resource_id || "—"}</td>
                    <td title={event.user_agent}>{event.caller_ip || "—"}</td>
                    <td class="mono">{event.data ? JSON.stringify(event.data) : ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="actions">
            <button
              type="button"
              disabled={offset === 0}
              onClick={() => setOffset(Math.max(0, offset - pageSize))}
            >
              Newer
            </button>
            <button
              type="button"
              disabled={offset + pageSize >= page.total}
              onClick={() => setOffset(offset + pageSize)}
            >
              Older
            </button>
          </div>
        </>
      )}
    </section>
  );
}
