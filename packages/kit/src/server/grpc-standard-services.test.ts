import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { grpcHealthV1, grpcReflectionV1, grpcReflectionV1alpha, memoryV1 } from "@atrium/api";
import { create, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AuthenticationError } from "../auth/authentication-error.js";
import type { HealthReport } from "../observability/health.js";
import { createRequestMetrics } from "../observability/metrics.js";
import { createCallerAddressPolicy } from "./caller-address.js";
import { parseCidrList } from "./cidr.js";
import { createGrpcServer, type GrpcServer } from "./grpc-server.js";
import { capturedLogger } from "./service-host.fixtures.js";

const { SERVING, NOT_SERVING, SERVICE_UNKNOWN } = grpcHealthV1.HealthCheckResponse_ServingStatus;
const root = fileURLToPath(new URL("../../../../", import.meta.url));

/** Of the server's reflection answer to each request, one after the other on one stream. */
async function reflect(
  client: ReturnType<typeof createClient<typeof grpcReflectionV1.ServerReflection>>,
  requests: grpcReflectionV1.ServerReflectionRequest["messageRequest"][],
) {
  async function* stream() {
    for (const messageRequest of requests) {
      yield create(grpcReflectionV1.ServerReflectionRequestSchema, { messageRequest });
    }
  }
  const answers = [];
  for await (const answer of client.serverReflectionInfo(stream())) answers.push(answer);
  return answers;
}

describe("grpc.health.v1 and server reflection on every gRPC server", () => {
  let server: GrpcServer;
  let baseUrl: string;
  let status: HealthReport["status"] = "healthy";
  before(async () => {
    server = createGrpcServer({
      logger: capturedLogger().logger,
      metrics: createRequestMetrics({ service: "test" }),
      // An authenticator that refuses everyone does not stand in their way.
      callerAddress: createCallerAddressPolicy({ allowedCidrs: parseCidrList(["127.0.0.0/8"]) }),
      authenticator: {
        authenticate: async () => {
          throw new AuthenticationError("api_key", "missing API key");
        },
      },
      services: [{ service: memoryV1.MemoryService, implementation: {} }],
      healthReport: async () => ({ status, service: "test", timestamp: "", checks: {} }),
      healthWatchIntervalMs: 20,
    });
    baseUrl = `http://127.0.0.1:${await server.listen("127.0.0.1", 0)}`;
  });
  after(() => server.close(1000));

  const transport = () => createGrpcTransport({ baseUrl });

  test("Check follows the service's health, for the server and each service, without credentials", async () => {
    const health = createClient(grpcHealthV1.Health, transport());
    status = "healthy";
    assert.equal((await health.check({ service: "" })).status, SERVING);
    assert.equal((await health.check({ service: "memory.v1.MemoryService" })).status, SERVING);
    status = "degraded";
    assert.equal((await health.check({ service: "" })).status, NOT_SERVING);
    status = "healthy";
    await assert.rejects(health.check({ service: "nope.v1.Nope" }), (error: ConnectError) => {
      assert.equal(error.code, Code.NotFound);
      return true;
    });
  });

  test("the services themselves still ask for credentials", async () => {
    const memory = createClient(memoryV1.MemoryService, transport());
    await assert.rejects(memory.createSession({ tenantId: "t" }), (error: ConnectError) => {
      assert.equal(error.code, Code.Unauthenticated);
      return true;
    });
  });

  test("health answers a caller outside ALLOWED_CIDRS, like /health; reflection does not", async () => {
    const restricted = createGrpcServer({
      logger: capturedLogger().logger,
      metrics: createRequestMetrics({ service: "test" }),
      callerAddress: createCallerAddressPolicy({ allowedCidrs: parseCidrList(["10.9.9.0/24"]) }),
      services: [{ service: memoryV1.MemoryService, implementation: {} }],
    });
    const url = `http://127.0.0.1:${await restricted.listen("127.0.0.1", 0)}`;
    try {
      const outside = createGrpcTransport({ baseUrl: url });
      const health = createClient(grpcHealthV1.Health, outside);
      assert.equal((await health.check({ service: "" })).status, SERVING);
      const reflection = createClient(grpcReflectionV1.ServerReflection, outside);
      await assert.rejects(
        reflect(reflection, [{ case: "listServices", value: "" }]),
        (error: ConnectError) => {
          assert.equal(error.code, Code.PermissionDenied);
          return true;
        },
      );
    } finally {
      await restricted.close(1000);
    }
  });

  test("Watch sends the status, then each change, and ends when the server drains", async () => {
    const watchServer = createGrpcServer({
      logger: capturedLogger().logger,
      metrics: createRequestMetrics({ service: "test" }),
      callerAddress: createCallerAddressPolicy(),
      services: [{ service: memoryV1.MemoryService, implementation: {} }],
      healthReport: async () => ({ status, service: "test", timestamp: "", checks: {} }),
      healthWatchIntervalMs: 20,
    });
    const url = `http://127.0.0.1:${await watchServer.listen("127.0.0.1", 0)}`;
    const health = createClient(grpcHealthV1.Health, createGrpcTransport({ baseUrl: url }));
    status = "healthy";
    const seen: number[] = [];
    for await (const answer of health.watch({ service: "" })) {
      seen.push(answer.status);
      if (seen.length === 1) status = "degraded";
      if (seen.length === 2) status = "healthy";
      // Drains while the stream is open: watchers hear NOT_SERVING and the stream ends.
      if (seen.length === 3) void watchServer.close(2000);
    }
    assert.deepEqual(seen, [SERVING, NOT_SERVING, SERVING, NOT_SERVING]);
  });

  test("Watch of an unknown service answers SERVICE_UNKNOWN and stays open", async () => {
    const health = createClient(grpcHealthV1.Health, transport());
    const abort = new AbortController();
    const stream = health.watch({ service: "nope.v1.Nope" }, { signal: abort.signal });
    const first = await stream[Symbol.asyncIterator]().next();
    assert.equal(first.value?.status, SERVICE_UNKNOWN);
    abort.abort();
  });

  test("reflection v1 lists the services and answers files by symbol and by name, imports included", async () => {
    const reflection = createClient(grpcReflectionV1.ServerReflection, transport());
    const [list, bySymbol, byName, missing] = await reflect(reflection, [
      { case: "listServices", value: "" },
      { case: "fileContainingSymbol", value: "memory.v1.MemoryService.CreateSession" },
      { case: "fileByFilename", value: "health/v1/health.proto" },
      { case: "fileContainingSymbol", value: "nope.v1.Nope" },
    ]);
    assert.equal(list.messageResponse.case, "listServicesResponse");
    assert.deepEqual(list.messageResponse.value?.service.map((s) => s.name).sort(), [
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
      "memory.v1.MemoryService",
    ]);

    assert.equal(bySymbol.messageResponse.case, "fileDescriptorResponse");
    const files = (bySymbol.messageResponse.value?.fileDescriptorProto ?? []).map((bytes) =>
      fromBinary(FileDescriptorProtoSchema, bytes),
    );
    const memoryFile = files.find((f) => f.package === "memory.v1");
    assert.ok(memoryFile?.service.some((s) => s.name === "MemoryService"));
    for (const dependency of memoryFile?.dependency ?? []) {
      assert.ok(
        files.some((f) => f.name === dependency),
        `${dependency} is sent with it`,
      );
    }

    assert.equal(byName.messageResponse.case, "fileDescriptorResponse");
    assert.equal(missing.messageResponse.case, "errorResponse");
    assert.equal(missing.messageResponse.value?.errorCode, Code.NotFound);
  });

  test("reflection v1alpha, for older tools, answers the same", async () => {
    const reflection = createClient(grpcReflectionV1alpha.ServerReflection, transport());
    async function* one() {
      yield create(grpcReflectionV1alpha.ServerReflectionRequestSchema, {
        messageRequest: { case: "listServices", value: "" },
      });
    }
    const answers = [];
    for await (const answer of reflection.serverReflectionInfo(one())) answers.push(answer);
    assert.equal(answers[0].messageResponse.case, "listServicesResponse");
    assert.ok(
      answers[0].messageResponse.value?.service.some((s) => s.name === "memory.v1.MemoryService"),
    );
  });

  test("buf curl lists the methods and calls grpc.health.v1.Health/Check through reflection alone", async () => {
    const buf = join(root, "node_modules/.bin/buf");
    const run = promisify(execFile);
    const { stdout: methods } = await run(buf, [
      "curl",
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "--list-methods",
      baseUrl,
    ]);
    assert.match(methods, /^memory\.v1\.MemoryService\/CreateSession$/m);
    assert.match(methods, /^grpc\.health\.v1\.Health\/Check$/m);
    const { stdout: check } = await run(buf, [
      "curl",
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "-d",
      "{}",
      `${baseUrl}/grpc.health.v1.Health/Check`,
    ]);
    assert.deepEqual(JSON.parse(check), { status: "SERVING" });
  });
});
