import type { RunStore } from "../runs/run-store.js";
import { outcomeOfRun, stepEventOf } from "./step-events.js";
import type { WebhookOutbox } from "./webhook-outbox.js";

/**
 * The run store, with every transition to yielded, completed, failed or cancelled recorded in
 * the outbox in the same write as the transition (see RunStore.withEvents): whichever path ends
 * a step (its owner's finish, a cancel of a waiting step, a lapsed lease), its event is recorded
 * once, and never for a transition that did not happen. `onError` hears of an event the file
 * store wrote with its run but could not hand to the outbox yet (it is retried).
 */
export function withStepEvents(
  store: RunStore,
  outbox: WebhookOutbox,
  onError: (error: unknown, context: string) => void,
): RunStore {
  return store.withEvents({
    outbox,
    onError,
    eventOf(run) {
      const outcome = outcomeOfRun(run);
      return outcome ? stepEventOf(outcome) : undefined;
    },
  });
}
