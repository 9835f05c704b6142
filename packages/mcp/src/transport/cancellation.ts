/**
 * A request's cancellation from outside its own POST (a later `notifications/cancelled`, or the
 * client leaving). Its AbortController is made only when a tool asks for the signal (ask and
 * http_request do; recall, remember and context never): in Node 20 an AbortSignal is a
 * transferable object, about 25 µs of the gateway's CPU per call on the development VM.
 */
export interface Cancellation {
  cancel(reason: unknown): void;
  signal(): AbortSignal;
}

export function createCancellation(): Cancellation {
  let controller: AbortController | undefined;
  let cancelled: { reason: unknown } | undefined;
  return {
    cancel(reason) {
      cancelled ??= { reason };
      controller?.abort(reason);
    },
    signal() {
      if (!controller) {
        controller = new AbortController();
        if (cancelled) controller.abort(cancelled.reason);
      }
      return controller.signal;
    },
  };
}
