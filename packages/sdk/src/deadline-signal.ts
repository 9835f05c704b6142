/**
 * `AbortSignal.any([AbortSignal.timeout(ms), ...signals])` without Node 20's flaw: `any` holds
 * its sources weakly and `AbortSignal.timeout`'s timer holds its signal weakly too, so a garbage
 * collection while a request waits drops the deadline and the request never ends (seen with the
 * MCP `http_request` bound once a large module had loaded). Here the timer holds the controller,
 * so the deadline fires whatever the collector does; it is unref'd so it keeps no process alive.
 */
export function deadlineSignal(
  timeoutMs: number,
  ...signals: (AbortSignal | undefined)[]
): AbortSignal {
  const deadline = new AbortController();
  const timer = setTimeout(
    () =>
      deadline.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    timeoutMs,
  );
  (timer as { unref?: () => void }).unref?.();
  const others = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  return others.length > 0 ? AbortSignal.any([deadline.signal, ...others]) : deadline.signal;
}
