import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { OpenAiError } from "./openai-error.js";
import { createOpenAiHttp } from "./openai-http.js";

/** A loopback server answering each request with the next scripted reply. */
async function scripted(replies: ((res: ServerResponse) => void)[]) {
  const seen: { authorization?: string; body: string }[] = [];
  let arrivals = 0;
  const server = createServer((req, res) => {
    arrivals++;
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      seen.push({ authorization: req.headers.authorization, body });
      (replies.shift() ?? ((r) => r.writeHead(500).end()))(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1/`,
    seen,
    /** Requests that reached the server, whole or not (a client may give up mid-body). */
    arrivals: () => arrivals,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (res: ServerResponse) =>
    res
      .writeHead(status, { "content-type": "application/json", ...headers })
      .end(JSON.stringify(body));

test("retries a rate limit after the provider's Retry-After, then answers the JSON", async (t) => {
  const server = await scripted([
    json(429, { error: "slow" }, { "retry-after": "0.05" }),
    json(200, { ok: 1 }),
  ]);
  t.after(server.close);
  const http = createOpenAiHttp({ baseUrl: server.baseUrl, apiKey: "sk-test", backoffMs: 600_000 });
  const started = performance.now();
  assert.deepEqual(await http.postJson("/embeddings", { input: ["x"] }), { ok: 1 });
  // Retry-After (50 ms) was waited, not the backoff (a random wait of up to 30 s, the cap).
  assert.ok(performance.now() - started < 10_000);
  assert.equal(server.seen.length, 2);
  assert.equal(server.seen[0].authorization, "Bearer sk-test");
  assert.deepEqual(JSON.parse(server.seen[1].body), { input: ["x"] });
});

test("a refused request is not retried and its error names the status, never the key", async (t) => {
  const server = await scripted([json(401, { error: "bad key" })]);
  t.after(server.close);
  const http = createOpenAiHttp({ baseUrl: server.baseUrl, apiKey: "sk-secret", backoffMs: 1 });
  const failure = await http.postJson("/chat/completions", {}).catch((e: unknown) => e);
  assert.ok(failure instanceof OpenAiError);
  assert.equal(failure.status, 401);
  assert.equal(failure.isAuthFailure, true);
  assert.equal(failure.retryable, false);
  assert.match(failure.message, /POST \/chat\/completions answered HTTP 401/);
  assert.doesNotMatch(failure.message, /sk-secret/);
  assert.equal(server.seen.length, 1);
});

test("a timeout is not retried; server errors are, up to the limit", async (t) => {
  const slowServer = await scripted([(res) => setTimeout(() => res.writeHead(200).end("{}"), 500)]);
  t.after(slowServer.close);
  const slow = createOpenAiHttp({ baseUrl: slowServer.baseUrl, timeoutMs: 50, backoffMs: 1 });
  await assert.rejects(
    slow.postJson("/x", {}),
    (e: unknown) => e instanceof OpenAiError && !e.retryable,
  );
  // A retry would follow the timeout after the 1 ms backoff. On a loaded machine the timed-out
  // request itself may not have reached the server yet, so the bound is "at most one".
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.ok(slowServer.arrivals() <= 1, `${slowServer.arrivals()} requests after a timeout`);

  const failingServer = await scripted([json(503, {}), json(503, {})]);
  t.after(failingServer.close);
  const failing = createOpenAiHttp({ baseUrl: failingServer.baseUrl, retries: 1, backoffMs: 1 });
  await assert.rejects(failing.postJson("/x", {}), /HTTP 503/);
  assert.equal(failingServer.seen.length, 2);
});

test("an abort ends the wait between tries", async () => {
  const http = createOpenAiHttp({ baseUrl: "http://127.0.0.1:9/v1", backoffMs: 60_000 });
  const controller = new AbortController();
  let attempts = 0;
  const run = http.retrying(async () => {
    attempts++;
    const failure = new OpenAiError("unavailable", 503);
    failure.retryable = true;
    throw failure;
  }, controller.signal);
  setTimeout(() => controller.abort(), 20);
  await assert.rejects(run, /unavailable/);
  assert.equal(attempts, 1);
});
