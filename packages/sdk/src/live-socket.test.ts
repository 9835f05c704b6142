import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { WebSocketServer } from "ws";
import { ConnectionRevokedError } from "./errors.js";
import { createGatewayClient } from "./gateway-client.js";
import { LiveSocketClosedError, openLiveSocket } from "./live-socket.js";
import { type LoopbackServer, sendJson, startLoopbackServer } from "./testing/loopback-server.js";

/**
 * A provider socket on loopback that speaks the live-socket protocol as a server must (deliver
 * each id of a session once, in order; ack cumulatively) and accepts only the current access
 * token, beside a scripted gateway whose refresh issues the next one.
 */
let generation = 1;
let revoked = false;
/** Seconds until the tokens the gateway issues expire. */
let lifetime = 3600;
let gateway: LoopbackServer;
let wss: WebSocketServer;
let wsUrl: string;
/** Messages delivered to the application, per session, in delivery order. */
const delivered = new Map<string, number[]>();
const upgrades: { authorization?: string; url: string }[] = [];
/** When set, the server delivers the next message of this id but drops the connection unacked. */
let dropAfterDelivering: number | undefined;

const accepted = () => `Bearer at-${generation}`;

before(async () => {
  gateway = await startLoopbackServer((request, response) => {
    if (request.url.startsWith("/v1/refresh/")) {
      generation += 1;
      return sendJson(response, 200, { connection_id: "c", status: "active" });
    }
    if (revoked) return sendJson(response, 410, { code: "connection_revoked" });
    if (request.url.startsWith("/v1/token/q")) {
      return sendJson(response, 200, {
        connection_id: "q",
        auth_type: "api_key",
        api_key: "k-1",
        strategy: { type: "query_param", param_name: "key" },
      });
    }
    if (request.url.startsWith("/v1/token/signed")) {
      return sendJson(response, 200, {
        connection_id: "signed",
        auth_type: "api_key",
        api_key: "k-1",
        strategy: { type: "hmac_payload" },
      });
    }
    sendJson(response, 200, {
      connection_id: "c",
      auth_type: "oauth2",
      token_type: "bearer",
      access_token: `at-${generation}`,
      expires_at: new Date(Date.now() + lifetime * 1000).toISOString(),
      strategy: { type: "oauth2" },
    });
  });
  wss = new WebSocketServer({
    port: 0,
    host: "127.0.0.1",
    verifyClient: ({ req }: { req: IncomingMessage }, done) => {
      upgrades.push({ authorization: req.headers.authorization, url: req.url ?? "" });
      const query = new URL(req.url ?? "/", "http://x").searchParams.get("key");
      done(req.headers.authorization === accepted() || query === "k-1", 401);
    },
  });
  wss.on("connection", (socket) => {
    let session = "";
    socket.on("message", (raw) => {
      const frame = JSON.parse(String(raw)) as { type: string; session?: string; id?: number };
      if (frame.type === "hello") {
        session = frame.session ?? "";
        return;
      }
      if (frame.type !== "message" || frame.id === undefined) return;
      const seen = delivered.get(session) ?? [];
      delivered.set(session, seen);
      const highest = seen.at(-1) ?? 0;
      if (frame.id === highest + 1) seen.push(frame.id);
      if (frame.id === dropAfterDelivering) {
        dropAfterDelivering = undefined;
        socket.terminate();
        return;
      }
      socket.send(JSON.stringify({ type: "ack", id: seen.at(-1) ?? 0 }));
      if (frame.id === 5) socket.send(JSON.stringify({ type: "message", data: { hello: 5 } }));
    });
  });
  await new Promise((resolve) => wss.once("listening", resolve));
  wsUrl = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/stream`;
});

beforeEach(() => {
  revoked = false;
  lifetime = 3600;
  upgrades.splice(0);
});

after(async () => {
  for (const client of wss.clients) client.terminate();
  await new Promise((resolve) => wss.close(resolve));
  await gateway.close();
});

const refreshes = () => gateway.requests.filter((r) => r.url.startsWith("/v1/refresh/")).length;
const onlySession = () => {
  const sessions = [...delivered.values()];
  return sessions[sessions.length - 1];
};

test("a credential rotated mid-stream: every confirmed message arrives once, in order", async () => {
  delivered.clear();
  const received: unknown[] = [];
  const live = openLiveSocket(createGatewayClient({ baseUrl: gateway.url }), "c", {
    url: wsUrl,
    onMessage: (data) => received.push(data),
  });
  const sends: Promise<void>[] = [];
  for (let i = 1; i <= 300; i++) {
    sends.push(live.send({ n: i }));
    if (i === 100) {
      // The provider rotates its accepted token and drops every socket as for an expired one.
      generation += 1;
      for (const client of wss.clients) client.close(4401, "token expired");
    }
    // A message the server delivered but never acknowledged: it is resent and not redelivered.
    if (i === 200) dropAfterDelivering = 200;
    if (i % 20 === 0) await sleep(5);
  }
  await Promise.all(sends);
  assert.deepEqual(
    onlySession(),
    Array.from({ length: 300 }, (_, i) => i + 1),
  );
  assert.ok(refreshes() >= 1, "the refused credential was refreshed through the gateway");
  assert.ok(upgrades.length >= 3, `${upgrades.length} connections`);
  assert.deepEqual(received, [{ hello: 5 }]);
  await live.close();
  assert.equal(live.state, "closed");
});

test("an upgrade refused with 401 is retried with a refreshed credential", async () => {
  delivered.clear();
  generation += 1;
  const before = refreshes();
  const sdk = createGatewayClient({ baseUrl: gateway.url });
  // The SDK's cache holds a token the provider no longer accepts.
  const stale = (await sdk.getToken("c")).access_token;
  generation += 1;
  const live = openLiveSocket(sdk, "c", { url: wsUrl });
  await live.send("first");
  assert.equal(upgrades[0].authorization, `Bearer ${stale}`);
  assert.equal(upgrades.length, 2, "one refused upgrade, one accepted");
  assert.equal(upgrades[1].authorization, accepted());
  assert.equal(refreshes(), before + 1);
  await live.close();
});

test("the socket rotates its credential before the token expires", async () => {
  delivered.clear();
  lifetime = 2;
  const states: string[] = [];
  const live = openLiveSocket(createGatewayClient({ baseUrl: gateway.url }), "c", {
    url: wsUrl,
    refreshBeforeMs: 1500,
    onStateChange: (state) => states.push(state),
  });
  await live.send("before");
  // Due 0.5 s in; waited for rather than slept on, so a loaded machine delivers it late, not never.
  for (let waited = 0; upgrades.length < 2 && waited < 1800; waited += 20) await sleep(20);
  await live.send("after");
  assert.ok(upgrades.length >= 2, "a second connection with a fresh token");
  assert.ok(states.includes("reconnecting"));
  assert.deepEqual(onlySession(), [1, 2]);
  await live.close();
});

test("a revoked connection stops reconnecting; unconfirmed sends fail with ConnectionRevokedError", async () => {
  delivered.clear();
  const live = openLiveSocket(createGatewayClient({ baseUrl: gateway.url }), "c", { url: wsUrl });
  await live.send("ok");
  revoked = true;
  generation += 1;
  for (const client of wss.clients) client.close(4401, "revoked upstream");
  const pending = live.send("never confirmed");
  await assert.rejects(pending, ConnectionRevokedError);
  await assert.rejects(live.done, ConnectionRevokedError);
  const connections = upgrades.length;
  await sleep(300);
  assert.equal(upgrades.length, connections, "no reconnection after revocation");
  await assert.rejects(live.send("late"), LiveSocketClosedError);
});

test("query-parameter credentials go in the URL; signing strategies are refused clearly", async () => {
  const sdk = createGatewayClient({ baseUrl: gateway.url });
  const live = openLiveSocket(sdk, "q", { url: wsUrl });
  await live.send("via query");
  assert.match(upgrades.at(-1)?.url ?? "", /[?&]key=k-1/);
  await live.close();
  const signed = openLiveSocket(sdk, "signed", { url: wsUrl });
  await assert.rejects(
    signed.done,
    /hmac_payload credentials cannot be sent on a WebSocket upgrade/,
  );
});
