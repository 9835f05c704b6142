import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { brokerV1 } from "@atrium/api";
import { errorInfoOf } from "@atrium/kit";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { createTokenGathering } from "./token-gathering.js";

type ManyRequest = {
  retrievals: { request: { id: string }; forwardedFor: string; userAgent: string }[];
};

const token = (id: string) => create(brokerV1.TokenResponseSchema, { connectionId: id });

/** A broker whose GetConnectionTokens answers "missing" ids with NotFound, others with a token. */
function fakeBroker(options: { many?: (request: ManyRequest) => Promise<unknown> } = {}) {
  const singles: string[] = [];
  const batches: ManyRequest[] = [];
  const gathering = createTokenGathering({
    maxBatch: 3,
    async one(request) {
      singles.push(String(request.id));
      return token(String(request.id));
    },
    async many(request) {
      batches.push(request as ManyRequest);
      if (options.many) return (await options.many(request as ManyRequest)) as never;
      return create(brokerV1.GetConnectionTokensResponseSchema, {
        results: (request as ManyRequest).retrievals.map(({ request: { id } }) =>
          id === "missing"
            ? {
                result: {
                  case: "error" as const,
                  value: { code: Code.NotFound, message: `connection ${id} not found` },
                },
              }
            : id === "revoked"
              ? {
                  result: {
                    case: "error" as const,
                    value: {
                      code: Code.FailedPrecondition,
                      message: `connection ${id} was revoked`,
                      errorInfo: {
                        reason: "connection_revoked",
                        domain: "atrium",
                        metadata: { connection_id: id },
                      },
                    },
                  },
                }
              : id === "db-down"
                ? {
                    result: {
                      case: "error" as const,
                      value: {
                        code: Code.Unavailable,
                        message: "database unavailable",
                        retryAfterSeconds: 1,
                      },
                    },
                  }
                : { result: { case: "token" as const, value: token(id) } },
        ),
      });
    },
  });
  return { singles, batches, get: gathering };
}

describe("token gathering", () => {
  test("a lone read goes as GetConnectionToken", async () => {
    const broker = fakeBroker();
    assert.equal((await broker.get({ id: "a" })).connectionId, "a");
    assert.deepEqual(broker.singles, ["a"]);
    assert.equal(broker.batches.length, 0);
  });

  test("reads of one turn go together, each with its caller's address and agent, at most maxBatch per call", async () => {
    const broker = fakeBroker();
    const headers = (n: number) =>
      new Headers({ "x-forwarded-for": `10.0.0.${n}`, "user-agent": `agent-${n}` });
    const answers = await Promise.all(
      ["a", "b", "c", "d"].map((id, n) => broker.get({ id }, { headers: headers(n) })),
    );
    assert.deepEqual(
      answers.map((a) => a.connectionId),
      ["a", "b", "c", "d"],
    );
    assert.deepEqual(
      broker.batches[0].retrievals.map((r) => [r.request.id, r.forwardedFor, r.userAgent]),
      [
        ["a", "10.0.0.0", "agent-0"],
        ["b", "10.0.0.1", "agent-1"],
        ["c", "10.0.0.2", "agent-2"],
      ],
    );
    // The fourth did not fit: it went alone.
    assert.deepEqual(broker.singles, ["d"]);
  });

  test("a retrieval's error is thrown to its read alone, as the single call's error", async () => {
    const broker = fakeBroker();
    const [found, missing] = await Promise.allSettled([
      broker.get({ id: "a" }),
      broker.get({ id: "missing" }),
    ]);
    assert.equal(found.status, "fulfilled");
    assert.equal(missing.status, "rejected");
    const error = (missing as PromiseRejectedResult).reason as ConnectError;
    assert.equal(error.code, Code.NotFound);
    assert.equal(error.rawMessage, "connection missing not found");
  });

  test("a retrieval's retry advice reaches its read as the single call's retry-after", async () => {
    const broker = fakeBroker();
    const [, down] = await Promise.allSettled([
      broker.get({ id: "a" }),
      broker.get({ id: "db-down" }),
    ]);
    const error = (down as PromiseRejectedResult).reason as ConnectError;
    assert.equal(error.code, Code.Unavailable);
    assert.equal(error.metadata.get("retry-after"), "1");
  });

  test("a retrieval's fixed error reaches its read with its ErrorInfo, as the single call's", async () => {
    const broker = fakeBroker();
    const [, revoked] = await Promise.allSettled([
      broker.get({ id: "a" }),
      broker.get({ id: "revoked" }),
    ]);
    const error = (revoked as PromiseRejectedResult).reason as ConnectError;
    assert.deepEqual(errorInfoOf(error), {
      reason: "connection_revoked",
      params: { connection_id: "revoked" },
    });
  });

  test("a failed call fails each of its reads with its error (so each can fall back alone)", async () => {
    const failure = new ConnectError("connection reset", Code.Unavailable);
    const broker = fakeBroker({ many: () => Promise.reject(failure) });
    const outcomes = await Promise.allSettled([broker.get({ id: "a" }), broker.get({ id: "b" })]);
    assert.deepEqual(
      outcomes.map((o) => (o as PromiseRejectedResult).reason),
      [failure, failure],
    );
  });

  test("a broker without GetConnectionTokens is asked one read at a time, now and later", async () => {
    const broker = fakeBroker({
      many: () => Promise.reject(new ConnectError("not here", Code.Unimplemented)),
    });
    const first = await Promise.all([broker.get({ id: "a" }), broker.get({ id: "b" })]);
    assert.deepEqual(
      first.map((a) => a.connectionId),
      ["a", "b"],
    );
    await Promise.all([broker.get({ id: "c" }), broker.get({ id: "d" })]);
    assert.equal(broker.batches.length, 1);
    assert.deepEqual(broker.singles, ["a", "b", "c", "d"]);
  });

  test("a read whose caller cancels is answered Canceled at once; the others go on", async () => {
    let answer: (() => void) | undefined;
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const broker = fakeBroker({
      async many(request) {
        await held;
        return create(brokerV1.GetConnectionTokensResponseSchema, {
          results: request.retrievals.map(({ request: { id } }) => ({
            result: { case: "token" as const, value: token(id) },
          })),
        });
      },
    });
    const controller = new AbortController();
    const cancelled = broker.get({ id: "a" }, { signal: controller.signal });
    const kept = broker.get({ id: "b" });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await assert.rejects(cancelled, (error: ConnectError) => error.code === Code.Canceled);
    answer?.();
    assert.equal((await kept).connectionId, "b");

    const early = new AbortController();
    early.abort();
    await assert.rejects(
      broker.get({ id: "c" }, { signal: early.signal }),
      (error: ConnectError) => error.code === Code.Canceled,
    );
  });
});
