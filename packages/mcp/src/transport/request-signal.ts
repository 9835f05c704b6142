/**
 * A fetch that gives every request an abort signal of its own, tied to the caller's signal only
 * while the request and its body are in flight.
 *
 * The SDK's client transport hands its one long-lived signal (aborted when the transport closes)
 * to every fetch, and undici keeps an abort listener on a request's signal until the request is
 * garbage collected. Over a long desktop session that is thousands of listeners on one signal:
 * memory, a walk of the list per new request, and past 1,500 a warning with a stack per call
 * (the same leak mcphub fixed in its MCP client, samanhappy/mcphub#1062). Closing the transport
 * still aborts whatever is in flight.
 */
export function withRequestSignal(fetchImpl: typeof fetch): typeof fetch {
  return async (input, init) => {
    const outer = init?.signal;
    if (!outer) return fetchImpl(input, init);
    const own = new AbortController();
    const abort = () => own.abort(outer.reason);
    if (outer.aborted) abort();
    else outer.addEventListener("abort", abort, { once: true });
    const untie = () => outer.removeEventListener("abort", abort);
    let response: Response;
    try {
      response = await fetchImpl(input, { ...init, signal: own.signal });
    } catch (error) {
      untie();
      throw error;
    }
    if (!response.body) {
      untie();
      return response;
    }
    // The tie lasts until the body ends, errs or is cancelled: an SSE answer can stream for the
    // whole of a long tool call, and closing the transport must still stop it.
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            untie();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          untie();
          controller.error(error);
        }
      },
      cancel(reason) {
        untie();
        return reader.cancel(reason);
      },
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
