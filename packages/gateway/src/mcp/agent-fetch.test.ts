import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { createAgentFetch } from "./agent-fetch.js";

const agentFetch = createAgentFetch();
const sockets = new Set<unknown>();
let seen: { method?: string; url?: string; headers: IncomingMessage["headers"]; body: string }[];
let server: Server;
let base: string;

before(async () => {
  server = createServer(async (req, res) => {
    sockets.add(req.socket);
    let body = "";
    for await (const chunk of req) body += chunk;
    seen.push({ method: req.method, url: req.url, headers: req.headers, body });
    if (req.url === "/empty") return res.writeHead(204).end();
    if (req.url === "/slow") return;
    res.writeHead(req.url === "/missing" ? 404 : 200, { "content-type": "application/json" });
    res.end(JSON.stringify({ echoed: body }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  agentFetch.close();
  server.closeAllConnections();
  server.close();
});

test("sends method, headers and a JSON body; answers status, headers and body", async () => {
  seen = [];
  const body = JSON.stringify({ query: "boots ü" });
  const answer = await agentFetch.fetch(`${base}/search?x=1`, {
    method: "POST",
    headers: new Headers({ "content-type": "application/json", "x-api-key": "k" }),
    body,
  });
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.get("content-type"), "application/json");
  assert.ok(answer instanceof Response);
  assert.deepEqual(await answer.clone().json(), { echoed: body });
  assert.equal(await answer.text(), JSON.stringify({ echoed: body }));
  const bytes = await (
    await agentFetch.fetch(`${base}/search`, { method: "POST", body })
  ).arrayBuffer();
  assert.deepEqual(JSON.parse(Buffer.from(bytes).toString("utf8")), { echoed: body });
  assert.equal(seen[0].method, "POST");
  assert.equal(seen[0].url, "/search?x=1");
  assert.equal(seen[0].headers["x-api-key"], "k");
  assert.equal(seen[0].headers["content-length"], String(Buffer.byteLength(body)));
  const missing = await agentFetch.fetch(`${base}/missing`);
  assert.equal(missing.status, 404);
  assert.equal((await agentFetch.fetch(`${base}/empty`)).status, 204);
});

test("calls share kept-alive sockets", async () => {
  sockets.clear();
  for (let i = 0; i < 5; i++) await (await agentFetch.fetch(`${base}/again`)).text();
  assert.equal(sockets.size, 1);
});

test("an aborted call rejects; a stream body is refused", async () => {
  const call = agentFetch.fetch(`${base}/slow`, { signal: AbortSignal.timeout(50) });
  await assert.rejects(call, (error: Error) => error.name === "AbortError");
  await assert.rejects(
    agentFetch.fetch(`${base}/x`, { method: "POST", body: new Blob(["x"]) }),
    /string body/,
  );
});
