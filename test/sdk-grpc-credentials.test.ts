import assert from "node:assert/strict";
import { createServer, type Http2Server, type Http2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { memoryV1 } from "@atrium/api";
import { ConnectionRevokedError, createGatewayClient } from "@atrium/sdk";
import { createCredentialInterceptor } from "@atrium/sdk/grpc";
import {
  EchoService,
  type LoopbackServer,
  sendJson,
  startLoopbackServer,
} from "@atrium/sdk/testing";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";

/**
 * The SDK's Connect interceptor against a real gRPC server on loopback that accepts only the
 * current credential and rotates it mid-run, and a scripted gateway whose refresh issues the next
 * access token.
 */
let gateway: LoopbackServer;
let grpc: Http2Server;
let grpcUrl: string;
let generation = 1;
let accepted = "Bearer at-1";
const seen: string[] = [];
const sessions = new Set<Http2Session>();
/** Pings each accepted Chat call received, one list per call. */
const chats: string[][] = [];
/** Watch answers one message, then refuses the credential (a revocation mid-stream). */
let refuseAfterFirst = false;

function credentialOf(context: { requestHeader: Headers }) {
  const credential =
    context.requestHeader.get("authorization") ?? `key ${context.requestHeader.get("x-test-key")}`;
  seen.push(credential);
  if (credential !== accepted) throw new ConnectError("stale", Code.Unauthenticated);
}

before(async () => {
  gateway = await startLoopbackServer((request, response) => {
    if (request.url.startsWith("/v1/refresh/")) {
      generation += 1;
      return sendJson(response, 200, { connection_id: "c", status: "active" });
    }
    if (request.url.startsWith("/v1/token/gone")) {
      return sendJson(response, 410, { code: "connection_revoked" });
    }
    if (request.url.startsWith("/v1/token/key")) {
      return sendJson(response, 200, {
        connection_id: "key",
        auth_type: "api_key",
        api_key: "k-1",
        strategy: { type: "api_key", header_name: "X-Test-Key" },
      });
    }
    sendJson(response, 200, {
      connection_id: "c",
      auth_type: "oauth2",
      token_type: "bearer",
      access_token: `at-${generation}`,
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
      strategy: { type: "oauth2" },
    });
  });
  grpc = createServer(
    connectNodeAdapter({
      routes: (router) => {
        router.service(EchoService, {
          async *watch(request, context) {
            credentialOf(context);
            for (let i = 1; i <= 3; i++) {
              yield { text: `${request.text}-${i}` };
              if (refuseAfterFirst) throw new ConnectError("revoked", Code.Unauthenticated);
            }
          },
          async *chat(requests, context) {
            credentialOf(context);
            const received: string[] = [];
            chats.push(received);
            for await (const ping of requests) {
              received.push(ping.text);
              yield { text: `echo ${ping.text}` };
            }
          },
        });
        router.service(memoryV1.MemoryService, {
          healthCheck(_request, context) {
            credentialOf(context);
            return { status: "healthy" };
          },
        });
      },
    }),
  );
  grpc.on("session", (session) => sessions.add(session));
  await new Promise<void>((resolve) => grpc.listen(0, "127.0.0.1", resolve));
  grpcUrl = `http://127.0.0.1:${(grpc.address() as AddressInfo).port}`;
});

after(async () => {
  await gateway?.close();
  // The clients keep their HTTP/2 sessions open; close() waits for them.
  for (const session of sessions) session.destroy();
  await new Promise((resolve) => grpc?.close(resolve));
});

const refreshes = () => gateway.requests.filter((r) => r.url.startsWith("/v1/refresh/")).length;

function memoryClient(connectionId: string) {
  const sdk = createGatewayClient({ baseUrl: gateway.url });
  return createClient(
    memoryV1.MemoryService,
    createGrpcTransport({
      baseUrl: grpcUrl,
      interceptors: [createCredentialInterceptor(sdk, connectionId)],
    }),
  );
}

test("a rotated credential: UNAUTHENTICATED refreshes once through the gateway and the call succeeds", async () => {
  const client = memoryClient("c");
  assert.equal((await client.healthCheck({})).status, "healthy");
  // The server rotates: the cached at-1 is now stale.
  accepted = "Bearer at-2";
  assert.equal((await client.healthCheck({})).status, "healthy");
  assert.equal(refreshes(), 1);
  assert.deepEqual(seen.splice(0), ["Bearer at-1", "Bearer at-1", "Bearer at-2"]);
  assert.equal((await client.healthCheck({})).status, "healthy", "the fresh token is cached");
  assert.deepEqual(seen.splice(0), ["Bearer at-2"]);

  // A credential the server never accepts: one refresh, then the error reaches the caller.
  accepted = "nothing";
  await assert.rejects(
    client.healthCheck({}),
    (error: unknown) => ConnectError.from(error).code === Code.Unauthenticated,
  );
  assert.equal(refreshes(), 2);
  assert.equal(seen.splice(0).length, 2);
});

test("static keys go into metadata per strategy and are never refreshed", async () => {
  accepted = "key k-1";
  const client = memoryClient("key");
  assert.equal((await client.healthCheck({})).status, "healthy");
  accepted = "key k-2";
  const before = refreshes();
  await assert.rejects(
    client.healthCheck({}),
    (error: unknown) => ConnectError.from(error).code === Code.Unauthenticated,
  );
  assert.equal(refreshes(), before);
  seen.splice(0);
});

test("a revoked connection fails the call before it is sent, with ConnectionRevokedError as the cause", async () => {
  // Connect's client wraps what an interceptor throws; the typed error is the ConnectError's cause.
  await assert.rejects(memoryClient("gone").healthCheck({}), (error: unknown) => {
    assert.ok(error instanceof ConnectError);
    assert.ok(error.cause instanceof ConnectionRevokedError);
    assert.equal(error.cause.status, 410);
    return true;
  });
  assert.deepEqual(seen, []);
});

function echoClient(connectionId: string) {
  const sdk = createGatewayClient({ baseUrl: gateway.url });
  return createClient(
    EchoService,
    createGrpcTransport({
      baseUrl: grpcUrl,
      interceptors: [createCredentialInterceptor(sdk, connectionId)],
    }),
  );
}

test("a server stream refused for a rotated credential is refreshed once and answered in full", async () => {
  accepted = `Bearer at-${generation}`;
  const client = echoClient("c");
  const warm: string[] = [];
  for await (const pong of client.watch({ text: "a" })) warm.push(pong.text);
  assert.deepEqual(warm, ["a-1", "a-2", "a-3"]);
  const before = refreshes();
  accepted = `Bearer at-${generation + 1}`;
  seen.splice(0);
  const texts: string[] = [];
  for await (const pong of client.watch({ text: "b" })) texts.push(pong.text);
  assert.deepEqual(texts, ["b-1", "b-2", "b-3"]);
  assert.equal(refreshes(), before + 1);
  assert.deepEqual(seen.splice(0), [`Bearer at-${generation - 1}`, accepted]);
});

test("a bidi stream refused at its start resends what it had sent, then goes on: each ping once", async () => {
  const client = echoClient("c");
  accepted = `Bearer at-${generation + 1}`;
  chats.splice(0);
  async function* pings() {
    for (let i = 1; i <= 5; i++) {
      yield { text: `p${i}` };
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  const echoes: string[] = [];
  for await (const pong of client.chat(pings())) echoes.push(pong.text);
  assert.deepEqual(echoes, ["echo p1", "echo p2", "echo p3", "echo p4", "echo p5"]);
  assert.deepEqual(
    chats,
    [["p1", "p2", "p3", "p4", "p5"]],
    "one accepted call received each ping once",
  );
});

test("a stream refused after it answered is not repeated: the caller sees the error", async () => {
  const client = echoClient("c");
  refuseAfterFirst = true;
  const before = refreshes();
  const texts: string[] = [];
  try {
    await assert.rejects(
      (async () => {
        for await (const pong of client.watch({ text: "c" })) texts.push(pong.text);
      })(),
      (error: unknown) => ConnectError.from(error).code === Code.Unauthenticated,
    );
  } finally {
    refuseAfterFirst = false;
  }
  assert.deepEqual(texts, ["c-1"]);
  assert.equal(refreshes(), before);
});
