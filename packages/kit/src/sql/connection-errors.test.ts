import assert from "node:assert/strict";
import { test } from "node:test";
import { AtriumError, Code, restError } from "../errors.js";
import { asDatabaseUnavailable, isConnectionError } from "./connection-errors.js";

const withCode = (code: string, message = "x") => Object.assign(new Error(message), { code });

test("socket failures and shutdown SQLSTATEs are connection errors, by their code", () => {
  for (const error of [
    withCode("ECONNREFUSED"),
    withCode("ECONNRESET"),
    withCode("57P01", "terminating connection due to administrator command"),
    withCode("08006"),
    withCode("53300"),
    new AggregateError([withCode("ECONNREFUSED"), withCode("ECONNREFUSED")]),
  ]) {
    assert.ok(isConnectionError(error), String(error));
  }
});

test("query errors stay what they are, whatever their text says", () => {
  for (const error of [
    withCode("23505"),
    withCode("22021"),
    new Error("syntax"),
    new Error("Connection terminated unexpectedly"),
    "text",
    null,
  ]) {
    assert.equal(isConnectionError(error), false, String(error));
    assert.equal(asDatabaseUnavailable(error), error);
  }
});

test("a connection error becomes Unavailable: REST 503 with Retry-After, gRPC retry-after", () => {
  const error = asDatabaseUnavailable(withCode("ECONNREFUSED", "connect ECONNREFUSED 10.0.0.1"));
  assert.ok(error instanceof AtriumError);
  assert.equal(error.code, Code.Unavailable);
  assert.equal(error.metadata.get("retry-after"), "1");
  assert.deepEqual(restError(error), {
    status: 503,
    body: { code: "Unavailable", message: "database unavailable" },
    headers: { "retry-after": "1" },
  });
});

test("a connection the adapter saw fail makes any error Unavailable", () => {
  const error = asDatabaseUnavailable(new Error("no code"), true);
  assert.ok(error instanceof AtriumError);
  assert.equal(error.code, Code.Unavailable);
});
