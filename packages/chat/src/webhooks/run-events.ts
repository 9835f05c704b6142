import type { RunStore } from "../runs/run-store.js";
import { outcomeOfRun, type StepOutcome, stepEventOf } from "./step-events.js";
import type { WebhookOutbox } from "./webhook-outbox.js";

/**
 * The run store, with every transition to yielded, completed, failed or cancelled also put in
 * the outbox, after the transition is stored: whichever path ends a step (its owner's finish, a
 * cancel of a waiting step, a lapsed lease), its event is recorded once. A failure to record is
 * reported, never raised: the step's own answer does not depend on its webhook.
 */
export function withStepEvents(
  store: RunStore,
  outbox: WebhookOutbox,
  onError: (error: unknown, context: string) => void,
): RunStore {
  const record = async (outcome: StepOutcome | undefined) => {
    if (!outcome) return;
    try {
      await outbox.add(stepEventOf(outcome));
    } catch (error) {
      onError(error, "step event");
    }
  };
  return {
    ...store,
    async finish(workflowId, stepId, owner, outcome) {
      const finished = await store.finish(workflowId, stepId, owner, outcome);
      if (finished) {
        const run = await store.get(workflowId, stepId);
        // A pause counts once stored; a resume may already have claimed the run again.
        const pauses = run?.pauses ?? 0;
        await record({
          workflow_id: workflowId,
          step_id: stepId,
          status: outcome.status,
          pauses,
          ...(outcome.response ? { response: outcome.response } : {}),
          ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
        });
      }
      return finished;
    },
    async cancel(workflowId, stepId, reason) {
      const result = await store.cancel(workflowId, stepId, reason);
      if (result?.changed) await record(outcomeOfRun(result.run));
      return result;
    },
    async expire() {
      const expired = await store.expire();
      for (const run of expired) await record(outcomeOfRun(run));
      return expired;
    },
  };
}
