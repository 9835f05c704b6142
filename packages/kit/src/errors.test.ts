import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import {
  AtriumError,
  Code,
  codeForHttpStatus,
  normalizeHandlerError,
  restError,
} from "./errors.js";
import { createLogger } from "./logger/logger.js";

test("REST error bodies carry the gRPC code name and the message", () => {
  const { status, body } = restError(new AtriumError(Code.InvalidArgument, "user_id is required"));
  assert.equal(status, 400);
  assert.deepEqual(body, { code: "InvalidArgument", message: "user_id is required" });
});

test("foreign errors become Internal without leaking their message or stack", () => {
  const { status, body } = restError(new Error("connect ECONNREFUSED 10.0.0.1:5432 at Socket..."));
  assert.equal(status, 500);
  assert.deepEqual(body, { code: "Internal", message: "internal error" });
});

test("the gRPC to HTTP table follows the design", () => {
  const cases: [Code, number][] = [
    [Code.InvalidArgument, 400],
    [Code.Unauthenticated, 401],
    [Code.PermissionDenied, 403],
    [Code.NotFound, 404],
    [Code.AlreadyExists, 409],
    [Code.Aborted, 409],
    [Code.FailedPrecondition, 412],
    [Code.ResourceExhausted, 429],
    [Code.Unimplemented, 501],
    [Code.Unavailable, 503],
    [Code.Internal, 500],
  ];
  for (const [code, http] of cases)
    assert.equal(restError(new AtriumError(code, "x")).status, http);
});

test("a spec-fixed body and status override the table", () => {
  const e = new AtriumError(Code.FailedPrecondition, "revoked", {
    httpStatus: 410,
    httpBody: { code: "connection_revoked" },
  });
  assert.deepEqual(restError(e), {
    status: 410,
    body: { code: "connection_revoked" },
    headers: {},
  });
});

test("a handler error that is not ours is logged once with its cause; ours are not logged", () => {
  const lines: { msg: string; err?: { message: string } }[] = [];
  const logger = createLogger({
    name: "test",
    destination: new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  });
  const foreign = normalizeHandlerError(new Error("pool exhausted"), logger, "thing failed");
  assert.equal(foreign.code, Code.Internal);
  assert.equal(foreign.rawMessage, "internal error");
  const ours = normalizeHandlerError(
    new AtriumError(Code.NotFound, "no such connection"),
    logger,
    "thing failed",
  );
  assert.equal(ours.code, Code.NotFound);
  assert.equal(ours.rawMessage, "no such connection");
  assert.deepEqual(
    lines.map((l) => [l.msg, l.err?.message]),
    [["thing failed", "pool exhausted"]],
  );
});

test("a REST status maps back to the code the table gives it", () => {
  const cases: [number, Code][] = [
    [400, Code.InvalidArgument],
    [404, Code.NotFound],
    [409, Code.AlreadyExists],
    [412, Code.FailedPrecondition],
    [500, Code.Internal],
    [503, Code.Unavailable],
    [418, Code.Unknown],
  ];
  for (const [status, code] of cases) assert.equal(codeForHttpStatus(status), code, `${status}`);
});
