import assert from "node:assert/strict";
import { test } from "node:test";
import { connectionNotActive, ipNotAllowed, restError } from "@atrium/kit";
import { Code, type ConnectError } from "@connectrpc/connect";
import { findTrailerError, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { fromBrokerGrpcError, fromBrokerRestError } from "./broker-errors.js";

/** The error as the gateway's gRPC client receives it from the broker. */
function overGrpc(error: ConnectError): ConnectError {
  const received = findTrailerError(setTrailerStatus(new Headers(), error));
  assert.ok(received);
  return received;
}

test("a fixed error from the broker keeps its code and message and gets the contract's body", () => {
  const relayed = fromBrokerGrpcError(
    overGrpc(connectionNotActive({ connection_id: "c-1", status: "failed" })),
  );
  assert.equal(relayed.code, Code.FailedPrecondition);
  assert.equal(relayed.rawMessage, "connection c-1 is failed");
  assert.deepEqual(restError(relayed).body, {
    code: "connection_not_active",
    message: "connection is failed",
  });
});

test("the broker refusing the gateway's address is the gateway's 503, not the caller's 403", () => {
  const relayed = fromBrokerGrpcError(overGrpc(ipNotAllowed({})));
  assert.equal(relayed.code, Code.Unavailable);
  assert.equal(restError(relayed).status, 503);
  const overRest = fromBrokerRestError(403, restError(ipNotAllowed({})).body);
  assert.equal(overRest.code, Code.Unavailable);
});

test("a REST body naming no code gets the code its status maps to", () => {
  const relayed = fromBrokerRestError(404, "not json");
  assert.equal(relayed.code, Code.NotFound);
  assert.deepEqual(restError(relayed), {
    status: 404,
    body: { code: "NotFound", message: "broker answered 404" },
    headers: {},
  });
});
