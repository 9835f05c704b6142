import { useEffect, useRef, useState } from "preact/hooks";
import { callApi, readEventStream, when } from "./api";
import { PageMessages } from "./page-messages";

interface Workflow {
  workflow_id: string;
  updated_at: string;
  steps: { step_id: string; updated_at: string }[];
}

interface TraceEvent {
  type: string;
  step_id?: string;
  timestamp?: string;
  data?: Record<string, unknown>;
}

const text = (value: unknown) =>
  typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value);

/** One line per event: what it was and its content, as text (trace data is untrusted). */
function EventRow(props: { event: TraceEvent }) {
  const { type, data = {} } = props.event;
  let summary: string;
  if (type === "thinking") summary = String(data.thought ?? "");
  else if (type === "tool_start")
    summary = `${data.tool ?? "tool"}(${JSON.stringify(data.arguments ?? {})})`;
  else if (type === "tool_result")
    summary = `${data.tool ?? "tool"} → ${data.ok === false ? `error: ${data.error}` : text(data.result)}`;
  else if (type === "llm_request")
    summary = `${data.model ?? ""} ${data.purpose ?? ""}: ${data.prompt_preview ?? ""}`;
  else if (type === "llm_response")
    summary = `${data.model ?? ""} ${data.purpose ?? ""} in ${data.duration_ms ?? "?"} ms${data.error ? `: ${data.error}` : ""}`;
  else if (type === "step_complete") summary = `${data.status ?? ""}: ${text(data.summary)}`;
  else summary = JSON.stringify(data);
  return (
    <li class={`event event-${type}`}>
      <span class="event-type">{type}</span> <span class="event-data">{summary}</span>
    </li>
  );
}

/** A running workflow's events as they happen; reconnects with Last-Event-ID where it stopped. */
function LiveView(props: { workflowId: string }) {
  const [events, setEvents] = useState<TraceEvent[]>([]);
  const [state, setState] = useState("connecting");
  const lastId = useRef<string | undefined>(undefined);
  useEffect(() => {
    const controller = new AbortController();
    let attempt = 0;
    const connect = async () => {
      while (!controller.signal.aborted) {
        try {
          await readEventStream(
            `/v1/operator/workflows/${encodeURIComponent(props.workflowId)}/stream`,
            lastId.current,
            (message) => {
              if (message.id) lastId.current = message.id;
              try {
                const parsed = JSON.parse(message.data) as TraceEvent;
                setEvents((shown) => [...shown, { ...parsed, type: parsed.type ?? message.event }]);
              } catch {
                setEvents((shown) => [
                  ...shown,
                  { type: message.event, data: { text: message.data } },
                ]);
              }
            },
            controller.signal,
            () => {
              attempt = 0;
              setState("live");
            },
          );
          // The server ends a stream with its step; the next step of the workflow is followed
          // from the last event shown.
          setState("step finished; waiting for the next step");
          attempt = 1;
        } catch {
          if (controller.signal.aborted) return;
          attempt += 1;
          setState(`reconnecting from event ${lastId.current ?? "start"}`);
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 500 * 2 ** attempt)));
      }
    };
    void connect();
    return () => controller.abort();
  }, [props.workflowId]);
  return (
    <div>
      <p class="note" role="status">
        Live: {state}
      </p>
      <ol class="events">
        {events.map((event, i) => (
          <EventRow key={i} event={event} />
        ))}
      </ol>
    </div>
  );
}

/** Workflows, a past step's events from its trace file, and the live view of a running one. */
export function TracesPage() {
  const [workflows, setWorkflows] = useState<Workflow[] | undefined>();
  const [selected, setSelected] = useState<{ workflowId: string; stepId?: string } | undefined>();
  const [history, setHistory] = useState<TraceEvent[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [watch, setWatch] = useState("");

  useEffect(() => {
    callApi<{ workflows?: Workflow[] }>("GET", "/v1/operator/workflows?limit=50")
      .then((answer) => setWorkflows(answer.workflows ?? []))
      .catch((failure: Error) => setError(failure.message));
  }, []);

  useEffect(() => {
    setHistory(undefined);
    if (!selected?.stepId) return;
    const path = `/v1/operator/workflows/${encodeURIComponent(selected.workflowId)}/steps/${encodeURIComponent(selected.stepId)}`;
    callApi<{ events?: TraceEvent[] }>("GET", path)
      .then((answer) => setHistory(answer.events ?? []))
      .catch((failure: Error) => setError(failure.message));
  }, [selected]);

  return (
    <section aria-labelledby="traces-title">
      <h2 id="traces-title">Traces</h2>
      <PageMessages error={error} />
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          if (watch.trim()) setSelected({ workflowId: watch.trim() });
        }}
      >
        <label>
          Workflow id
          <input
            name="workflow"
            value={watch}
            placeholder="chat_…"
            onInput={(event) => setWatch(event.currentTarget.value)}
          />
        </label>
        <button type="submit">Watch live</button>
      </form>
      {workflows && workflows.length === 0 && <p class="note">No workflows have run yet.</p>}
      <div class="split">
        <ul class="workflows">
          {workflows?.map((workflow) => (
            <li key={workflow.workflow_id} data-workflow={workflow.workflow_id}>
              <button
                type="button"
                class="link"
                onClick={() => setSelected({ workflowId: workflow.workflow_id })}
              >
                {workflow.workflow_id}
              </button>{" "}
              <span class="note">{when(workflow.updated_at)}</span>
              <ul>
                {workflow.steps.map((step) => (
                  <li key={step.step_id}>
                    <button
                      type="button"
                      class="link"
                      data-step={step.step_id}
                      onClick={() =>
                        setSelected({ workflowId: workflow.workflow_id, stepId: step.step_id })
                      }
                    >
                      {step.step_id}
                    </button>
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
        <div class="detail">
          {selected && !selected.stepId && (
            <>
              <h3>{selected.workflowId}</h3>
              <LiveView workflowId={selected.workflowId} />
            </>
          )}
          {selected?.stepId && (
            <>
              <h3>
                {selected.workflowId} / {selected.stepId}
              </h3>
              <ol class="events">
                {history?.map((event, i) => (
                  <EventRow key={i} event={event} />
                ))}
              </ol>
            </>
          )}
        </div>
      </div>
    </section>
  );
}
