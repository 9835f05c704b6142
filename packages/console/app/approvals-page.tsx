import { useEffect, useState } from "preact/hooks";
import { callApi, queryString, when } from "./api";
import { PageMessages } from "./page-messages";

interface WaitingStep {
  workflow_id: string;
  step_id: string;
  pause: number;
  pending: { kind: string; detail: string }[];
  draft: string;
  message: string;
  asked_by: { user_id: string; session_id?: string; agent_id: string; workflow_id: string };
  asked_at: string;
}

interface Decision {
  pause: number;
  decision: "approve" | "deny";
  decided_by: string;
  decided_at: string;
}

interface Run {
  workflow_id: string;
  step_id: string;
  status: string;
  reason?: string;
  response?: { answer: string };
  decisions?: Decision[];
}

/** A step decided on this page, followed until it ends (or pauses again). */
interface Decided {
  step: WaitingStep;
  decision: "approve" | "deny";
  run?: Run;
}

const settled = (run: Run | undefined) =>
  run !== undefined && run.status !== "running" && run.status !== "queued";

const runPath = (step: { workflow_id: string; step_id: string }) =>
  `${encodeURIComponent(step.workflow_id)}/${encodeURIComponent(step.step_id)}`;

/** A waiting step: what is asked, the draft (shown as text: it is the agent's), who asked, when. */
function WaitingCard(props: {
  step: WaitingStep;
  busy: boolean;
  onDecide: (step: WaitingStep, decision: "approve" | "deny") => void;
}) {
  const { step, busy, onDecide } = props;
  const asker = step.asked_by;
  return (
    <li class="card" data-run={`${step.workflow_id}/${step.step_id}`}>
      <h4>
        {step.workflow_id} / {step.step_id}
      </h4>
      <ul>
        {step.pending.map((item, i) => (
          <li key={i} class="asked">
            {item.kind}: {item.detail}
          </li>
        ))}
      </ul>
      <p class="note">
        Asked by {asker.user_id}
        {asker.session_id ? ` (session ${asker.session_id})` : ""} through agent {asker.agent_id},{" "}
        {when(step.asked_at)}; request: “{step.message}”
      </p>
      <pre class="content draft">{step.draft}</pre>
      <div class="actions">
        <button type="button" disabled={busy} onClick={() => onDecide(step, "approve")}>
          Approve
        </button>
        <button type="button" class="danger" disabled={busy} onClick={() => onDecide(step, "deny")}>
          Deny
        </button>
      </div>
    </li>
  );
}

/**
 * The agent steps waiting for a person's approval, on every agent host behind the gateway.
 * Approving resumes the step (in the background, on the host the gateway reaches); the decided
 * step leaves the list and its run status is followed until it ends.
 */
export function ApprovalsPage() {
  const [waiting, setWaiting] = useState<WaitingStep[] | undefined>();
  const [cursor, setCursor] = useState<string | undefined>();
  const [decided, setDecided] = useState<Decided[]>([]);
  const [busy, setBusy] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();

  const load = (after?: string) =>
    callApi<{ runs?: WaitingStep[]; next_cursor?: string }>(
      "GET",
      `/v1/operator/approvals${queryString({ limit: 50, cursor: after })}`,
    )
      .then((page) => {
        setWaiting((shown) => [...(after ? (shown ?? []) : []), ...(page.runs ?? [])]);
        setCursor(page.next_cursor);
      })
      .catch((failure: Error) => setError(failure.message));

  useEffect(() => {
    void load();
  }, []);

  // Follows the decided steps that have not settled yet.
  const following = decided.filter((item) => !settled(item.run)).length;
  useEffect(() => {
    if (following === 0) return;
    const timer = setInterval(() => {
      for (const item of decided.filter((entry) => !settled(entry.run))) {
        callApi<Run>("GET", `/v1/operator/runs/${runPath(item.step)}`)
          .then((run) =>
            setDecided((all) =>
              all.map((entry) => (entry.step.step_id === run.step_id ? { ...entry, run } : entry)),
            ),
          )
          .catch((failure: Error) => setError(failure.message));
      }
    }, 500);
    return () => clearInterval(timer);
  }, [following, decided]);

  const decide = async (step: WaitingStep, decision: "approve" | "deny") => {
    const id = `${step.workflow_id}/${step.step_id}`;
    setBusy(id);
    setError(undefined);
    try {
      await callApi("POST", `/v1/operator/approvals/${runPath(step)}`, {
        approval: decision,
        pause: step.pause,
      });
      setWaiting((shown) => shown?.filter((entry) => entry !== step));
      setDecided((all) => [{ step, decision }, ...all]);
    } catch (failure) {
      setError((failure as Error).message);
      // Decided elsewhere, or ended: the list as it is now.
      void load();
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <section aria-labelledby="approvals-title">
      <h2 id="approvals-title">Approvals</h2>
      <PageMessages error={error} />
      <div class="actions">
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      {waiting && waiting.length === 0 && <p class="note">No step is waiting for an approval.</p>}
      <ul class="cards approvals">
        {waiting?.map((step) => (
          <WaitingCard
            key={`${step.workflow_id}/${step.step_id}`}
            step={step}
            busy={busy === `${step.workflow_id}/${step.step_id}`}
            onDecide={(chosen, decision) => void decide(chosen, decision)}
          />
        ))}
      </ul>
      {cursor && (
        <button type="button" onClick={() => void load(cursor)}>
          More
        </button>
      )}
      {decided.length > 0 && (
        <>
          <h3>Decided here</h3>
          <table>
            <thead>
              <tr>
                <th>Step</th>
                <th>Decision</th>
                <th>Status</th>
                <th>Recorded</th>
              </tr>
            </thead>
            <tbody>
              {decided.map((item) => {
                const audit = item.run?.decisions?.at(-1);
                return (
                  <tr key={item.step.step_id} data-decided={item.step.step_id}>
                    <td>
                      {item.step.workflow_id} / {item.step.step_id}
                    </td>
                    <td>{item.decision === "approve" ? "approved" : "denied"}</td>
                    <td class="status">{item.run?.status ?? "resuming"}</td>
                    <td>{audit ? `by ${audit.decided_by}, ${when(audit.decided_at)}` : "—"}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
