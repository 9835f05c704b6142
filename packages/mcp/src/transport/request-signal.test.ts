import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { withRequestSignal } from "./request-signal.js";

async function startServer(t: { after: (fn: () => unknown) => void }) {
  let held: (() => void) | undefined;
  const server = createServer((req, res) => {
    if (req.url === "/stream") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      held = () => res.end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    held?.();
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test("requests sharing one long-lived signal leave no listener on it once they end", async (t) => {
  const base = await startServer(t);
  const fetchShared = withRequestSignal(fetch);
  const transport = new AbortController();
  for (let i = 0; i < 50; i++) {
    const response = await fetchShared(`${base}/json`, { signal: transport.signal });
    assert.deepEqual(await response.json(), { ok: true });
  }
  const refused = fetchShared("http://127.0.0.1:1/", { signal: transport.signal });
  await assert.rejects(refused);
  assert.equal(getEventListeners(transport.signal, "abort").length, 0);
});

test("aborting the shared signal still stops a body in flight", async (t) => {
  const base = await startServer(t);
  const fetchShared = withRequestSignal(fetch);
  const transport = new AbortController();
  const response = await fetchShared(`${base}/stream`, { signal: transport.signal });
  assert.equal(response.headers.get("content-type"), "text/event-stream");
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const first = await reader.read();
  assert.equal(new TextDecoder().decode(first.value), "data: first\n\n");
  assert.equal(getEventListeners(transport.signal, "abort").length, 1, "tied while in flight");
  transport.abort(new Error("transport closed"));
  await assert.rejects(reader.read());
  assert.equal(getEventListeners(transport.signal, "abort").length, 0);
});

test("a cancelled body unties it, and an already aborted signal never fetches", async (t) => {
  const base = await startServer(t);
  const fetchShared = withRequestSignal(fetch);
  const transport = new AbortController();
  const response = await fetchShared(`${base}/stream`, { signal: transport.signal });
  await response.body?.cancel();
  assert.equal(getEventListeners(transport.signal, "abort").length, 0);
  transport.abort();
  await assert.rejects(fetchShared(`${base}/json`, { signal: transport.signal }), {
    name: "AbortError",
  });
});
