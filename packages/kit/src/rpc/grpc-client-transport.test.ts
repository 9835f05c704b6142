import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { memoryV1 } from "@atrium/api";
import { Code, ConnectError, createClient, type ServiceImpl } from "@connectrpc/connect";
import type { TlsOptions } from "../auth/auth-config.js";
import { AtriumError } from "../errors.js";
import { createRequestMetrics } from "../observability/metrics.js";
import { createCallerAddressPolicy } from "../server/caller-address.js";
import { createGrpcServer, type GrpcServer } from "../server/grpc-server.js";
import { capturedLogger } from "../server/service-host.fixtures.js";
import { createTestPki } from "../server/test-certificates.js";
import { eventually } from "../testing/eventually.js";
import {
  createGrpcClientTransport,
  type GrpcClientTransportOptions,
} from "./grpc-client-transport.js";

const { MemoryService } = memoryV1;
type CreateSession = ServiceImpl<typeof MemoryService>["createSession"];

interface Seen {
  apiKey?: string | null;
  remainingMs?: number;
  abortCode?: Code;
}

/** The Node error code at the end of an error's cause chain. */
function rootCause(error: unknown): unknown {
  let cause = error;
  while (typeof cause === "object" && cause !== null && "cause" in cause && cause.cause) {
    cause = cause.cause;
  }
  return (cause as { code?: unknown } | undefined)?.code;
}

describe("gRPC client transport against the service host", () => {
  let server: GrpcServer;
  let port: number;
  let baseUrl: string;
  let createSession: CreateSession;
  let seen: Seen = {};
  const calls: string[] = [];
  const opened: { close(): void }[] = [];

  const implementation: Partial<ServiceImpl<typeof MemoryService>> = {
    createSession: (request, context) => {
      calls.push(request.tenantId);
      seen.apiKey = context.requestHeader.get("x-api-key");
      return createSession(request, context);
    },
  };
  const startServer = (listenPort: number, tls?: TlsOptions) => {
    const host = createGrpcServer({
      logger: capturedLogger().logger,
      metrics: createRequestMetrics({ service: "test" }),
      callerAddress: createCallerAddressPolicy(),
      tls,
      services: [{ service: MemoryService, implementation }],
    });
    return { host, listening: host.listen("127.0.0.1", listenPort) };
  };

  const client = (options: Partial<GrpcClientTransportOptions> = {}) => {
    const transport = createGrpcClientTransport({ baseUrl, ...options });
    opened.push(transport);
    return createClient(MemoryService, transport);
  };

  before(async () => {
    const started = startServer(0);
    server = started.host;
    port = await started.listening;
    baseUrl = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    for (const transport of opened) transport.close();
    await server.close(0);
  });

  test("an answer, with the call's headers sent and the response headers and trailers read", async () => {
    createSession = (request, context) => {
      context.responseHeader.set("x-served-by", "memory");
      context.responseTrailer.set("x-rows", "1");
      return { sessionId: `s-${request.tenantId}` };
    };
    let header: Headers | undefined;
    let trailer: Headers | undefined;
    const memory = client({
      interceptors: [
        (next) => (request) => {
          request.header.set("x-api-key", "key-1");
          return next(request);
        },
      ],
    });
    const answer = await memory.createSession(
      { tenantId: "t1" },
      { onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) },
    );
    assert.equal(answer.sessionId, "s-t1");
    assert.equal(seen.apiKey, "key-1");
    assert.equal(header?.get("x-served-by"), "memory");
    assert.equal(trailer?.get("x-rows"), "1");
  });

  test("an error keeps its code, its percent-encoded message and its metadata", async () => {
    createSession = () => {
      throw new AtriumError(Code.Unavailable, "database unavailable: 100% busy, réessayez", {
        retryAfterSeconds: 2,
      });
    };
    const error = await client()
      .createSession({ tenantId: "busy" })
      .catch((e) => e);
    assert.ok(error instanceof ConnectError);
    assert.equal(error.code, Code.Unavailable);
    assert.equal(error.rawMessage, "database unavailable: 100% busy, réessayez");
    assert.equal(error.metadata.get("retry-after"), "2");

    createSession = () => {
      throw new AtriumError(Code.NotFound, "no such session");
    };
    const missing = await client()
      .createSession({ tenantId: "gone" })
      .catch((e) => e);
    assert.equal(ConnectError.from(missing).code, Code.NotFound);
    assert.equal(ConnectError.from(missing).rawMessage, "no such session");
  });

  test("a deadline is sent to the server and ends the call there and here", async () => {
    seen = {};
    createSession = async (_request, context) => {
      seen.remainingMs = context.timeoutMs();
      await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
      seen.abortCode = ConnectError.from(context.signal.reason).code;
      throw context.signal.reason;
    };
    const memory = client({ defaultTimeoutMs: 10_000 });
    const error = await memory
      .createSession({ tenantId: "slow" }, { timeoutMs: 200 })
      .catch((e) => e);
    assert.equal(ConnectError.from(error).code, Code.DeadlineExceeded);
    assert.ok(seen.remainingMs !== undefined && seen.remainingMs > 0 && seen.remainingMs <= 200);
    await eventually("the handler's signal ended", () => seen.abortCode !== undefined);

    // The session survives a deadline: the next call is answered on it.
    createSession = (request) => ({ sessionId: `s-${request.tenantId}` });
    assert.equal((await memory.createSession({ tenantId: "after" })).sessionId, "s-after");
  });

  test("a caller's abort cancels the call on both sides; an aborted signal sends nothing", async () => {
    seen = {};
    createSession = async (_request, context) => {
      await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
      seen.abortCode = ConnectError.from(context.signal.reason).code;
      return { sessionId: "unread" };
    };
    const memory = client();
    const abort = new AbortController();
    const pending = memory
      .createSession({ tenantId: "leaving" }, { signal: abort.signal })
      .catch((e) => e);
    await eventually("the handler runs", () => calls.at(-1) === "leaving");
    abort.abort();
    assert.equal(ConnectError.from(await pending).code, Code.Canceled);
    await eventually("the handler's signal ended", () => seen.abortCode !== undefined);
    assert.equal(seen.abortCode, Code.Canceled);

    const before = calls.length;
    const error = await memory
      .createSession({ tenantId: "never" }, { signal: AbortSignal.abort() })
      .catch((e) => e);
    assert.equal(ConnectError.from(error).code, Code.Canceled);
    assert.equal(calls.length, before);
  });

  test("a header HTTP/2 forbids fails that call alone", async () => {
    createSession = (request) => ({ sessionId: `s-${request.tenantId}` });
    const memory = client();
    assert.equal((await memory.createSession({ tenantId: "before" })).sessionId, "s-before");
    const before = calls.length;
    const error = await memory
      .createSession({ tenantId: "bad" }, { headers: { connection: "keep-alive" } })
      .catch((e) => e);
    assert.equal(ConnectError.from(error).code, Code.Internal);
    assert.equal(calls.length, before);
    assert.equal((await memory.createSession({ tenantId: "after" })).sessionId, "s-after");
  });

  test("many concurrent calls share one connection", async () => {
    createSession = async (request) => {
      await new Promise((resolve) => setImmediate(resolve));
      return { sessionId: `s-${request.tenantId}` };
    };
    const connections: Socket[] = [];
    const proxy: Server = createServer((socket) => {
      connections.push(socket);
      const upstream = tcpConnect(port, "127.0.0.1");
      socket.pipe(upstream).pipe(socket);
      socket.on("error", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
    });
    proxy.listen(0, "127.0.0.1");
    await once(proxy, "listening");
    const address = proxy.address();
    assert.ok(address !== null && typeof address === "object");
    const memory = client({ baseUrl: `http://127.0.0.1:${address.port}` });
    try {
      const ids = Array.from({ length: 200 }, (_, i) => `c${i}`);
      const answers = await Promise.all(ids.map((tenantId) => memory.createSession({ tenantId })));
      assert.deepEqual(
        answers.map((a) => a.sessionId),
        ids.map((id) => `s-${id}`),
      );
      assert.equal(connections.length, 1);
    } finally {
      opened.at(-1)?.close();
      for (const socket of connections) socket.destroy();
      proxy.close();
    }
  });

  test("a server that goes away fails calls as Unavailable, and the next server is dialled anew", async () => {
    createSession = (request) => ({ sessionId: `s-${request.tenantId}` });
    const memory = client();
    assert.equal((await memory.createSession({ tenantId: "first" })).sessionId, "s-first");
    await server.close(0);

    // A call may still meet the closing session; once it is gone a call dials, and is refused.
    let refused: unknown;
    await eventually("a call is refused", async () => {
      refused = await memory.createSession({ tenantId: "down" }).catch((e) => e);
      return rootCause(refused) === "ECONNREFUSED";
    });
    assert.ok(refused instanceof ConnectError);
    assert.equal(refused.code, Code.Unavailable);

    const restarted = startServer(port);
    server = restarted.host;
    await restarted.listening;
    assert.equal((await memory.createSession({ tenantId: "again" })).sessionId, "s-again");
  });

  test("https with a private CA and a client certificate", async () => {
    createSession = (request) => ({ sessionId: `s-${request.tenantId}` });
    const pki = await createTestPki();
    const secure = startServer(0, { ...pki.server, ca: pki.ca.cert, requireClientCert: true });
    try {
      const securePort = await secure.listening;
      const memory = client({
        baseUrl: `https://localhost:${securePort}`,
        tls: { ca: pki.ca.cert, cert: pki.client.cert, key: pki.client.key },
      });
      assert.equal((await memory.createSession({ tenantId: "tls" })).sessionId, "s-tls");
    } finally {
      await secure.host.close(0);
    }
  });

  test("an idle client does not hold its process open", async () => {
    createSession = (request) => ({ sessionId: `s-${request.tenantId}` });
    const root = fileURLToPath(new URL("../../../../", import.meta.url));
    const module = fileURLToPath(new URL("./grpc-client-transport.ts", import.meta.url));
    // One call, then nothing: no close(). The process must end on its own.
    const script = `
      const { createGrpcClientTransport } = await import(${JSON.stringify(module)});
      const { createClient } = await import("@connectrpc/connect");
      const { memoryV1 } = await import("@atrium/api");
      const transport = createGrpcClientTransport({ baseUrl: ${JSON.stringify(baseUrl)} });
      const answer = await createClient(memoryV1.MemoryService, transport).createSession({ tenantId: "child" });
      console.log(answer.sessionId);
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--conditions=atrium-source", "--import", "tsx", "--input-type=module", "-e", script],
      { cwd: root, timeout: 60_000 },
    );
    assert.equal(stdout.trim(), "s-child");
  });
});
