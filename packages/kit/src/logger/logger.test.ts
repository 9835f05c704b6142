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
