import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { credentialedFetch } from "./credentialed-fetch.js";

let base = "";
let server: ReturnType<typeof createServer>;
const limits = { timeoutMs: 300, maxResponseBytes: 10, maxRedirects: 2 };

before(async () => {
  server = createServer((req, res) => {
    if (req.url === "/hang") return; // never answers
    if (req.url === "/loop") {
      res.writeHead(302, { location: "/loop" });
      return res.end();
    }
    if (req.url === "/see-other") {
      res.writeHead(303, { location: "/method" });
      return res.end();
    }
    if (req.url === "/method") return res.end(req.method);
    res.writeHead(200, { "content-type": "application/octet-stream" });
    res.end(Buffer.from([0, 1, 2]));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

const call = (url: string, method = "GET", apiBase = base) =>
  credentialedFetch(
    (input, init) => fetch(input, init),
    apiBase,
    { method, url, headers: {}, body: method === "POST" ? "{}" : undefined },
    limits,
    new AbortController().signal,
  );

test("a call that does not answer in time is aborted", async () => {
  await assert.rejects(call("/hang"), { name: "TimeoutError" });
});

test("redirects within the origin are bounded; 303 turns into GET", async () => {
  await assert.rejects(call("/loop"), /more than 2 redirects/);
  const answer = await call("/see-other", "POST");
  assert.equal(answer.body, "GET");
  assert.equal(answer.url, `${base}/method`);
});

test("binary bodies come back as base64; another port of the same host is another origin", async () => {
  assert.equal((await call("/bin")).body, "base64:AAEC");
  const otherPort = `http://127.0.0.1:${Number(new URL(base).port) + 1}/x`;
  await assert.rejects(call(otherPort), /only be sent to http:\/\/127\.0\.0\.1:\d+, not/);
  await assert.rejects(call("/x", "GET", ""), /no api_base_url/);
});
