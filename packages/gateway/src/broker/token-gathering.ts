import { type brokerV1, ErrorInfoSchema } from "@atrium/api";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { type CallOptions, Code, ConnectError } from "@connectrpc/connect";

type TokenRequest = MessageInitShape<typeof brokerV1.GetConnectionTokenRequestSchema>;
type TokensRequest = MessageInitShape<typeof brokerV1.GetConnectionTokensRequestSchema>;

export interface TokenGatheringOptions {
  /** GetConnectionToken over gRPC. */
  one(request: TokenRequest, call?: CallOptions): Promise<brokerV1.TokenResponse>;
  /** GetConnectionTokens over gRPC. */
  many(request: TokensRequest): Promise<brokerV1.GetConnectionTokensResponse>;
  /** Most retrievals per GetConnectionTokens; the broker takes 100. */
  maxBatch?: number;
}

interface Waiting {
  request: TokenRequest;
  call: CallOptions | undefined;
  settled: boolean;
  resolve(token: brokerV1.TokenResponse): void;
  reject(error: unknown): void;
}

/**
 * Token reads that arrive in the same turn of the event loop go to the broker as one
 * GetConnectionTokens call. Each read on its own HTTP/2 stream costs the gateway and the broker
 * more CPU than the rest of the read together (stream set-up and teardown in Node's http2), so
 * under load this is most of the gateway's cost per token; a lone read still goes as
 * GetConnectionToken, with nothing added to its latency but one setImmediate.
 *
 * Every read keeps its own outcome: a broker error in its place is thrown as the ConnectError the
 * single call would have thrown; a failure of the whole call is thrown to each read, so each is
 * retried over REST by the caller's fallback as a single call would be; a read whose caller
 * cancels is answered Canceled at once (the broker may still serve and audit it, as it may a
 * single call cancelled in flight). A broker without GetConnectionTokens is asked one read at a
 * time from then on.
 */
export function createTokenGathering(options: TokenGatheringOptions) {
  const maxBatch = options.maxBatch ?? 100;
  let waiting: Waiting[] = [];
  let scheduled = false;
  let brokerGathers = true;

  const settle = (read: Waiting, outcome: () => void) => {
    if (read.settled) return;
    read.settled = true;
    outcome();
  };

  const alone = (read: Waiting) =>
    options.one(read.request, read.call).then(
      (token) => settle(read, () => read.resolve(token)),
      (error) => settle(read, () => read.reject(error)),
    );

  async function together(reads: Waiting[]) {
    let answer: brokerV1.GetConnectionTokensResponse;
    try {
      answer = await options.many({
        retrievals: reads.map((read) => ({
          request: read.request,
          forwardedFor: headerOf(read.call, "x-forwarded-for"),
          userAgent: headerOf(read.call, "user-agent"),
        })),
      });
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.Unimplemented) {
        brokerGathers = false;
        await Promise.all(reads.map(alone));
        return;
      }
      for (const read of reads) settle(read, () => read.reject(error));
      return;
    }
    reads.forEach((read, i) => {
      const result = answer.results[i]?.result;
      if (result?.case === "token") settle(read, () => read.resolve(result.value));
      else {
        const error = result?.case === "error" ? result.value : undefined;
        // As the single call would have carried it: the retry advice as retry-after metadata, a
        // fixed error's ErrorInfo as its detail.
        const metadata = error?.retryAfterSeconds
          ? { "retry-after": String(error.retryAfterSeconds) }
          : undefined;
        settle(read, () =>
          read.reject(
            new ConnectError(
              error?.message ?? "the broker gave no answer for this retrieval",
              error ? (error.code as Code) : Code.Internal,
              metadata,
              error?.errorInfo && [{ desc: ErrorInfoSchema, value: error.errorInfo }],
            ),
          ),
        );
      }
    });
  }

  function flush() {
    scheduled = false;
    const reads = waiting.filter((read) => !read.settled);
    waiting = [];
    for (let start = 0; start < reads.length; start += maxBatch) {
      const batch = reads.slice(start, start + maxBatch);
      if (batch.length === 1 || !brokerGathers) for (const read of batch) void alone(read);
      else void together(batch);
    }
  }

  return function getConnectionToken(
    request: TokenRequest,
    call?: CallOptions,
  ): Promise<brokerV1.TokenResponse> {
    return new Promise((resolve, reject) => {
      const signal = call?.signal;
      if (signal?.aborted) {
        reject(ConnectError.from(signal.reason, Code.Canceled));
        return;
      }
      const read: Waiting = { request, call, settled: false, resolve, reject };
      if (signal) {
        const onAbort = () =>
          settle(read, () => reject(ConnectError.from(signal.reason, Code.Canceled)));
        signal.addEventListener("abort", onAbort, { once: true });
        const done = () => signal.removeEventListener("abort", onAbort);
        read.resolve = (token) => {
          done();
          resolve(token);
        };
        read.reject = (error) => {
          done();
          reject(error);
        };
      }
      waiting.push(read);
      if (!scheduled) {
        scheduled = true;
        // Deferred to the end of this round of I/O, so the requests read together go together.
        setImmediate(flush);
      }
    });
  };
}

function headerOf(call: CallOptions | undefined, name: string): string {
  const headers = call?.headers;
  if (headers === undefined) return "";
  return (headers instanceof Headers ? headers : new Headers(headers)).get(name) ?? "";
}
