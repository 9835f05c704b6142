import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { createLogger } from "./logger.js";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, destination };
}

test("redacts secret headers and secret fields at the top level and nested", () => {
  const { lines, destination } = capture();
  const logger = createLogger({ name: "test", destination });
  logger.info(
    {
      req: {
        headers: {
          authorization: "Bearer bearer-secret",
          "x-api-key": "api-key-secret",
          "x-jwt-token": "jwt-secret",
          cookie: "sid=cookie-secret",
          accept: "application/json",
        },
      },
      password: "top-secret",
      body: { client_secret: "client-secret", nested: { refresh_token: "refresh-secret" } },
      items: [{ apiKey: "array-secret" }],
    },
    "request",
  );
  const raw = lines.join("");
  for (const secret of [
    "bearer-secret",
    "api-key-secret",
    "jwt-secret",
    "cookie-secret",
    "top-secret",
    "client-secret",
    "refresh-secret",
    "array-secret",
  ]) {
    assert.ok(!raw.includes(secret), `${secret} leaked`);
  }
  const line = JSON.parse(raw);
  assert.equal(line.name, "test");
  assert.equal(line.req.headers.accept, "application/json");
  assert.equal(line.req.headers.authorization, "[redacted]");
  assert.equal(line.body.nested.refresh_token, "[redacted]");
});

test("redacts at any depth, in errors, in child bindings, whatever a header's case", () => {
  const { lines, destination } = capture();
  const logger = createLogger({ name: "test", destination });
  const deep = { a: { b: { c: { d: { e: { f: { token: "deep-secret" } } } } } } };
  const cause = Object.assign(new Error("upstream refused"), { refresh_token: "cause-secret" });
  const failure = Object.assign(new Error("call failed", { cause }), {
    config: { headers: { Authorization: "Bearer error-secret" } },
  });
  logger.info({ deep, nested: { failure } }, "deep");
  logger.error(failure, "failed");
  logger.child({ session: { apiKey: "binding-secret" } }).info("from a child");
  const raw = lines.join("");
  for (const secret of ["deep-secret", "cause-secret", "error-secret", "binding-secret"]) {
    assert.ok(!raw.includes(secret), `${secret} leaked`);
  }
  const [first, second] = lines.map((line) => JSON.parse(line));
  assert.equal(first.deep.a.b.c.d.e.f.token, "[redacted]");
  // pino's error form: the message followed by its causes'.
  assert.equal(first.nested.failure.message, "call failed: upstream refused");
  assert.equal(second.err.type, "Error");
  assert.equal(second.err.message, "call failed: upstream refused");
  assert.match(second.err.stack, /call failed/);
  assert.equal(second.err.config.headers.Authorization, "[redacted]");
});

test("leaves the logged object untouched and survives cycles", () => {
  const { lines, destination } = capture();
  const logger = createLogger({ name: "test", destination });
  const headers: Record<string, string> = { "x-api-key": "kept-by-caller", accept: "*/*" };
  const request: Record<string, unknown> = { headers, items: [{ secret: "s" }, "plain"] };
  request.self = request;
  logger.info({ request }, "cyclic");
  assert.equal(headers["x-api-key"], "kept-by-caller");
  assert.deepEqual(request.items, [{ secret: "s" }, "plain"]);
  const line = JSON.parse(lines[0]);
  assert.equal(line.request.headers["x-api-key"], "[redacted]");
  assert.equal(line.request.headers.accept, "*/*");
  assert.deepEqual(line.request.items, [{ secret: "[redacted]" }, "plain"]);
  assert.equal(line.request.self, "[Circular]");
});
