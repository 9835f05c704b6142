import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { findTrailerError, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { restError } from "./errors.js";
import { errorInfoOf, type FixedError } from "./fixed-error.js";
import { fixedErrorFrom, fixedErrorFromBody } from "./fixed-error-relay.js";
import {
  attentionRequired,
  connectionNotActive,
  connectionRevoked,
  fixedErrors,
  invalidCredentials,
  providerNotValidatable,
} from "./fixed-errors.js";

/** The error as a gRPC client receives it: trailers written by the server, read back. */
function overGrpc(error: ConnectError): ConnectError {
  const received = findTrailerError(setTrailerStatus(new Headers(), error));
  assert.ok(received);
  return received;
}

test("the REST statuses and bodies are the contract's", () => {
  const cases: [ConnectError, number, unknown][] = [
    [attentionRequired({ connection_id: "c-1" }), 409, { error: "attention_required" }],
    [connectionRevoked({ connection_id: "c-1" }), 410, { code: "connection_revoked" }],
    [
      connectionNotActive({ connection_id: "c-1", status: "failed" }),
      400,
      { code: "connection_not_active", message: "connection is failed" },
    ],
    [
      providerNotValidatable({ provider_id: "p-1" }),
      422,
      {
        code: "provider_not_validatable",
        message: "provider has neither api_base_url nor user_info_endpoint",
      },
    ],
    [
      invalidCredentials({ provider_status: "401" }),
      422,
      { code: "invalid_credentials", message: "provider answered 401" },
    ],
  ];
  for (const [error, status, body] of cases) {
    assert.deepEqual(restError(error), { status, body, headers: {} });
  }
});

test("over gRPC the reason and params travel as ErrorInfo, not in the message", () => {
  const received = overGrpc(connectionNotActive({ connection_id: "c-1", status: "failed" }));
  assert.equal(received.code, Code.FailedPrecondition);
  assert.equal(received.rawMessage, "connection c-1 is failed");
  assert.deepEqual(errorInfoOf(received), {
    reason: "connection_not_active",
    params: { connection_id: "c-1", status: "failed" },
  });
});

test("a relay rebuilds every fixed error's REST answer from the gRPC detail alone", () => {
  for (const fixed of fixedErrors) {
    const params = Object.fromEntries(fixed.spec.params.map((name) => [name, `${name}-value`]));
    const original = (fixed as unknown as FixedError<string>)(params);
    const relayed = fixedErrorFrom(overGrpc(original), { retryAfterSeconds: 2 });
    assert.ok(relayed, fixed.spec.reason);
    assert.equal(relayed.code, original.code, fixed.spec.reason);
    assert.equal(relayed.rawMessage, original.rawMessage, fixed.spec.reason);
    assert.deepEqual(
      restError(relayed),
      { ...restError(original), headers: { "retry-after": "2" } },
      fixed.spec.reason,
    );
    assert.deepEqual(errorInfoOf(overGrpc(relayed)), errorInfoOf(overGrpc(original)));
  }
});

test("errors without the detail are not taken for fixed ones, whatever their message says", () => {
  const lookalike = new ConnectError("connection c-1 was revoked (connection_revoked)");
  assert.equal(fixedErrorFrom(overGrpc(lookalike)), undefined);
});

test("a fixed REST body is relayed unchanged, with the registry's code for gRPC callers", () => {
  const relayed = fixedErrorFromBody(410, { code: "connection_revoked" }, "broker answered 410");
  assert.ok(relayed);
  assert.equal(relayed.code, Code.FailedPrecondition);
  assert.deepEqual(restError(relayed).body, { code: "connection_revoked" });
  assert.equal(errorInfoOf(overGrpc(relayed))?.reason, "connection_revoked");
  assert.equal(fixedErrorFromBody(404, { code: "connection_revoked" }, "x"), undefined);
  assert.equal(fixedErrorFromBody(404, { code: "NotFound" }, "x"), undefined);
});
