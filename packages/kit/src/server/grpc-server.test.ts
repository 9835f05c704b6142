import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { once } from "node:events";
import * as http2 from "node:http2";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { memoryV1 } from "@atrium/api";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type ServiceImpl } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { AtriumError } from "../errors.js";
import { createRequestMetrics } from "../observability/metrics.js";
import { eventually } from "../testing/eventually.js";
import { createCallerAddressPolicy } from "./caller-address.js";
import { createGrpcServer, type GrpcServer } from "./grpc-server.js";
import { capturedLogger, memoryClient } from "./service-host.fixtures.js";
import { transportLimits } from "./transport-limits.js";

const { MemoryService, CreateSessionRequestSchema, CreateSessionResponseSchema } = memoryV1;
type CreateSession = ServiceImpl<typeof MemoryService>["createSession"];

/** What the last CreateSession saw of its context, and how its signal ended. */
interface Seen {
  remainingMs?: number;
  abortCode?: Code;
}

const readMaxBytes = 1024;

describe("gRPC server: the direct unary path and Connect's router side by side", () => {
  let server: GrpcServer;
  let baseUrl: string;
  let seen: Seen;
  let createSession: CreateSession;
  const calls: string[] = [];
  before(async () => {
    const implementation: Partial<ServiceImpl<typeof MemoryService>> = {
      createSession: (request, context) => {
        calls.push(request.tenantId);
        return createSession(request, context);
      },
    };
    server = createGrpcServer({
      logger: capturedLogger().logger,
      metrics: createRequestMetrics({ service: "test" }),
      callerAddress: createCallerAddressPolicy(),
      services: [{ service: MemoryService, implementation }],
      limits: transportLimits({ messageBytes: readMaxBytes }),
    });
    baseUrl = `http://127.0.0.1:${await server.listen("127.0.0.1", 0)}`;
  });
  after(() => server.close(1000));

  /** A @grpc/grpc-js client for CreateSession, serialized with the generated schemas. */
  function grpcJsClient(options: grpc.ClientOptions = {}) {
    const client = new grpc.Client(
      new URL(baseUrl).host,
      grpc.credentials.createInsecure(),
      options,
    );
    const serialize = (value: { tenantId: string }) =>
      Buffer.from(toBinary(CreateSessionRequestSchema, create(CreateSessionRequestSchema, value)));
    // grpc-js reports the trailers ("status") after the answer: the call resolves with both.
    const call = (request: { tenantId: string }) =>
      new Promise<{
        error: grpc.ServiceError | null;
        sessionId?: string;
        trailers: grpc.Metadata;
      }>((resolve) => {
        let answer: { error: grpc.ServiceError | null; sessionId?: string };
        client
          .makeUnaryRequest(
            "/memory.v1.MemoryService/CreateSession",
            serialize,
            (bytes: Buffer) => fromBinary(CreateSessionResponseSchema, bytes),
            request,
            new grpc.Metadata(),
            (error, response) => {
              answer = { error, sessionId: response?.sessionId };
            },
          )
          .on("status", (status: grpc.StatusObject) =>
            resolve({ ...answer, trailers: status.metadata }),
          );
      });
    return { call, close: () => client.close() };
  }

  test("answers, response headers and trailers, and error metadata reach both kinds of client", async () => {
    createSession = (request, context) => {
      context.responseHeader.set("x-served-by", "memory");
      context.responseTrailer.set("x-rows", "1");
      if (request.tenantId === "busy") {
        throw new AtriumError(Code.Unavailable, "database unavailable", { retryAfterSeconds: 2 });
      }
      return { sessionId: `s-${request.tenantId}` };
    };
    let header: Headers | undefined;
    let trailer: Headers | undefined;
    const connect = memoryClient(baseUrl);
    const ok = await connect.createSession(
      { tenantId: "t1" },
      { onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) },
    );
    assert.equal(ok.sessionId, "s-t1");
    assert.equal(header?.get("x-served-by"), "memory");
    assert.equal(trailer?.get("x-rows"), "1");
    const refused = await connect.createSession({ tenantId: "busy" }).catch((e) => e);
    assert.ok(refused instanceof ConnectError);
    assert.equal(refused.code, Code.Unavailable);
    assert.equal(refused.rawMessage, "database unavailable");
    assert.equal(refused.metadata.get("retry-after"), "2");

    const grpcJs = grpcJsClient();
    try {
      const answer = await grpcJs.call({ tenantId: "t2" });
      assert.equal(answer.error, null);
      assert.equal(answer.sessionId, "s-t2");
      assert.deepEqual(answer.trailers.get("x-rows"), ["1"]);
      const { error } = await grpcJs.call({ tenantId: "busy" });
      assert.equal(error?.code, grpc.status.UNAVAILABLE);
      assert.equal(error?.details, "database unavailable");
      assert.deepEqual(error?.metadata.get("retry-after"), ["2"]);
    } finally {
      grpcJs.close();
    }
  });

  test("a compressed request and the gRPC-Web protocol are served by the same implementation", async () => {
    createSession = (request) => ({ sessionId: `s-${request.tenantId}` });
    const gzip = grpcJsClient({ "grpc.default_compression_algorithm": 2 });
    try {
      const answer = await gzip.call({ tenantId: "zipped" });
      assert.equal(answer.error, null);
      assert.equal(answer.sessionId, "s-zipped");
    } finally {
      gzip.close();
    }
    const web = createClient(MemoryService, createGrpcWebTransport({ baseUrl, httpVersion: "2" }));
    assert.equal((await web.createSession({ tenantId: "web" })).sessionId, "s-web");
  });

  test("buf curl reaches the same implementation in gRPC, Connect and gRPC-Web", async () => {
    createSession = (request) => ({ sessionId: `s-${request.tenantId}` });
    const root = fileURLToPath(new URL("../../../../", import.meta.url));
    for (const protocol of ["grpc", "connect", "grpcweb"]) {
      const { stdout } = await promisify(execFile)(
        join(root, "node_modules/.bin/buf"),
        [
          "curl",
          "--protocol",
          protocol,
          "--http2-prior-knowledge",
          "--schema",
          ".",
          "-d",
          JSON.stringify({ tenantId: `curl-${protocol}` }),
          `${baseUrl}/memory.v1.MemoryService/CreateSession`,
        ],
        { cwd: root },
      );
      assert.deepEqual(JSON.parse(stdout), { sessionId: `s-curl-${protocol}` }, protocol);
    }
  });

  /**
   * One CreateSession on a bare HTTP/2 stream: the grpc-timeout is sent, but no client-side
   * timer races the server's. Resolves with the response header block merged with the trailers.
   */
  async function bareCall(tenantId: string, grpcTimeout: string) {
    const session = http2.connect(baseUrl);
    try {
      const message = toBinary(
        CreateSessionRequestSchema,
        create(CreateSessionRequestSchema, { tenantId }),
      );
      const envelope = Buffer.alloc(5 + message.byteLength);
      envelope.writeUInt32BE(message.byteLength, 1);
      envelope.set(message, 5);
      const stream = session.request({
        ":method": "POST",
        ":path": "/memory.v1.MemoryService/CreateSession",
        "content-type": "application/grpc",
        te: "trailers",
        "grpc-timeout": grpcTimeout,
      });
      stream.end(envelope);
      const fields: http2.IncomingHttpHeaders = {};
      stream.on("response", (headers) => Object.assign(fields, headers));
      stream.on("trailers", (trailers) => Object.assign(fields, trailers));
      stream.resume();
      await once(stream, "close");
      return fields;
    } finally {
      session.close();
    }
  }

  test("the handler sees the caller's deadline, and its signal ends when the deadline passes", async () => {
    seen = {};
    createSession = async (_request, context) => {
      seen.remainingMs = context.timeoutMs();
      await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
      seen.abortCode = ConnectError.from(context.signal.reason).code;
      throw context.signal.reason;
    };
    const answer = await bareCall("slow", "200m");
    assert.equal(answer["grpc-status"], String(Code.DeadlineExceeded));
    assert.equal(seen.abortCode, Code.DeadlineExceeded);
    assert.ok(seen.remainingMs !== undefined && seen.remainingMs > 0 && seen.remainingMs <= 200);
    assert.equal((await bareCall("t", "1x"))["grpc-status"], String(Code.InvalidArgument));
  });

  test("a client that goes away cancels the handler's signal", async () => {
    seen = {};
    createSession = async (_request, context) => {
      await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
      seen.abortCode = ConnectError.from(context.signal.reason).code;
      return { sessionId: "unread" };
    };
    const abort = new AbortController();
    const pending = memoryClient(baseUrl)
      .createSession({ tenantId: "leaving" }, { signal: abort.signal })
      .catch((e) => e);
    await eventually("the handler runs", () => calls.at(-1) === "leaving");
    abort.abort();
    assert.equal(ConnectError.from(await pending).code, Code.Canceled);
    await eventually("the handler's signal ended", () => seen.abortCode !== undefined);
    assert.equal(seen.abortCode, Code.Canceled);
  });

  test("a request over the size limit is refused before the handler runs", async () => {
    createSession = (request) => ({ sessionId: `s-${request.tenantId}` });
    const before = calls.length;
    const error = await memoryClient(baseUrl)
      .createSession({ tenantId: "x".repeat(readMaxBytes * 4) })
      .catch((e) => e);
    assert.equal(ConnectError.from(error).code, Code.ResourceExhausted);
    assert.equal(calls.length, before);
  });
});
