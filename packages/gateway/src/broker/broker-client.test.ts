import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AtriumError, Code } from "@atrium/kit";
import { brokerScript } from "../testing/broker-script.js";
import { type ScriptedBroker, startScriptedBroker } from "../testing/scripted-broker.js";
import { type BrokerConnection, createBrokerClient } from "./broker-client.js";

describe("broker client: gRPC first, REST on transport failure", () => {
  let broker: ScriptedBroker;
  let connection: BrokerConnection;
  const fallbacks: string[] = [];

  before(async () => {
    broker = await startScriptedBroker(brokerScript());
    connection = createBrokerClient({
      restUrl: broker.restUrl,
      grpcUrl: broker.grpcUrl,
      apiKey: "broker-key",
      timeoutMs: 1_000,
      grpcRetryAfterMs: 0,
      onFallback: (method) => fallbacks.push(method),
    });
  });
  after(async () => {
    connection.close();
    await broker.stop();
  });

  it("calls over gRPC while it is up, with the gateway's broker key", async () => {
    const token = await connection.client.getConnectionToken({ id: "c-1" });
    assert.equal(token.accessToken, "access-c-1");
    assert.equal(connection.lastTransport(), "grpc");
    const call = broker.calls.at(-1);
    assert.equal(call?.transport, "grpc");
    assert.equal(call?.headers.get("x-api-key"), "broker-key");
  });

  it("never retries an application error over REST, and keeps the spec's body", async () => {
    const before = broker.calls.length;
    await assert.rejects(
      connection.client.getConnectionToken({ id: "missing" }),
      (error: unknown) => {
        assert.ok(error instanceof AtriumError);
        assert.equal(error.code, Code.NotFound);
        return true;
      },
    );
    await assert.rejects(
      connection.client.getConnectionToken({ id: "attention" }),
      (error: unknown) => {
        assert.ok(error instanceof AtriumError);
        assert.equal(error.httpStatus, 409);
        assert.deepEqual(error.httpBody, { error: "attention_required" });
        return true;
      },
    );
    assert.deepEqual(
      broker.calls.slice(before).map((c) => c.transport),
      ["grpc", "grpc"],
    );
    assert.deepEqual(fallbacks, []);
  });

  it("passes the broker's Retry-After on, over gRPC and over REST", async () => {
    const restOnly = createBrokerClient({
      restUrl: broker.restUrl,
      apiKey: "broker-key",
      timeoutMs: 1_000,
    });
    for (const [transport, client] of [
      ["grpc", connection.client],
      ["rest", restOnly.client],
    ] as const) {
      await assert.rejects(client.getConnectionToken({ id: "db-down" }), (error: unknown) => {
        assert.ok(error instanceof AtriumError, transport);
        assert.equal(error.code, Code.Unavailable, transport);
        assert.equal(error.metadata.get("retry-after"), "1", transport);
        return true;
      });
    }
    restOnly.close();
  });

  it("does not resend a call its own caller abandoned", async () => {
    const before = broker.calls.length;
    const abandoned = new AbortController();
    abandoned.abort();
    await assert.rejects(
      connection.client.getConnectionToken({ id: "c-4" }, { signal: abandoned.signal }),
    );
    assert.equal(broker.calls.length, before);
    assert.deepEqual(fallbacks, []);
  });

  it("moves a call that misses its gRPC deadline to REST", async () => {
    const token = await connection.client.getConnectionToken(
      { id: "slow-grpc" },
      { timeoutMs: 300 },
    );
    assert.equal(token.accessToken, "access-slow-grpc");
    assert.deepEqual(
      broker.calls
        .filter((c) => c.method === "GetConnectionToken")
        .slice(-2)
        .map((c) => c.transport),
      ["grpc", "rest"],
    );
    assert.deepEqual(fallbacks, ["GetConnectionToken"]);
  });

  it("sends the same call over REST once the gRPC listener is gone", async () => {
    await broker.stopGrpc();
    const token = await connection.client.getConnectionToken({ id: "c-2", workspaceId: "ws-1" });
    assert.equal(token.accessToken, "access-c-2");
    assert.equal(connection.lastTransport(), "rest");
    assert.equal(broker.calls.at(-1)?.transport, "rest");
    assert.equal(broker.calls.at(-1)?.headers.get("x-api-key"), "broker-key");

    // Application errors over REST carry the broker's body unchanged.
    await assert.rejects(
      connection.client.refreshConnection({ id: "revoked" }),
      (error: unknown) => {
        assert.ok(error instanceof AtriumError);
        assert.equal(error.httpStatus, 410);
        assert.deepEqual(error.httpBody, { code: "connection_revoked" });
        return true;
      },
    );
    const revoked = await connection.client.revokeConnection({
      id: "c-3",
      workspaceId: "ws-1",
      reason: "done",
    });
    assert.equal(revoked.reason, "done");
    assert.equal(revoked.tokenDeleted, true);
  });
});
