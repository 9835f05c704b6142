/** A failed call to an OpenAI-compatible API. Messages carry the status and path, never the key. */
export class OpenAiError extends Error {
  /** Whether another try may succeed (a rate limit, a 5xx, a network error before any output). */
  retryable = false;

  constructor(
    message: string,
    /** HTTP status of the provider's answer, when there was one. */
    readonly status?: number,
    /** The provider's Retry-After, in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "OpenAiError";
  }

  /**
   * A failure without an HTTP answer (the network, a timeout, a broken stream). Worth another
   * try only when it is a network failure: not a timeout, not the caller's abort.
   */
  static fromCause(message: string, cause: unknown, signal?: AbortSignal): OpenAiError {
    const failure = new OpenAiError(`${message}: ${(cause as Error)?.message ?? String(cause)}`);
    failure.retryable =
      !signal?.aborted &&
      !(cause instanceof Error && (cause.name === "TimeoutError" || cause.name === "AbortError"));
    return failure;
  }

  /** The provider refused our key: a person has to supply credentials. */
  get isAuthFailure(): boolean {
    return this.status === 401 || this.status === 403;
  }
}
