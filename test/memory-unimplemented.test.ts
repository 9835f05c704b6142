import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { http, memoryV1 } from "@atrium/api";
import { createLogger, createServiceHost, type ServiceHost } from "@atrium/kit";
import { getOption } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

/**
 * The whole memory contract is routable before any of it is implemented: every RPC answers
 * Unimplemented on REST (501 with a JSON body) and on gRPC, to a client that knows only the
 * .proto file.
 */
const root = new URL("../", import.meta.url).pathname;
const methods = memoryV1.MemoryService.methods;

type UnaryCall = (
  request: object,
  callback: (error: grpc.ServiceError | null, response?: unknown) => void,
) => void;

function loadMemoryClient(address: string): grpc.Client & Record<string, UnaryCall> {
  const definition = protoLoader.loadSync("memory/v1/memory.proto", {
    includeDirs: [`${root}proto`, `${root}node_modules/google-proto-files`],
    keepCase: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    memory: { v1: { MemoryService: grpc.ServiceClientConstructor } };
  };
  const client = new loaded.memory.v1.MemoryService(address, grpc.credentials.createInsecure());
  return client as unknown as grpc.Client & Record<string, UnaryCall>;
}

describe("memory.v1.MemoryService with no implementation", () => {
  let host: ServiceHost;
  let restUrl: string;
  let client: ReturnType<typeof loadMemoryClient>;

  before(async () => {
    host = createServiceHost({
      name: "memory",
      logger: createLogger({ name: "memory", level: "silent" }),
      rest: { host: "127.0.0.1", port: 0 },
      grpc: { host: "127.0.0.1", port: 0 },
      services: [{ service: memoryV1.MemoryService, implementation: {} }],
    });
    const urls = await host.start();
    restUrl = urls.restUrl;
    assert.ok(urls.grpcUrl);
    client = loadMemoryClient(new URL(urls.grpcUrl).host);
  });
  after(async () => {
    client?.close();
    await host?.stop();
  });

  it("answers 501 with a JSON body on every REST path", async () => {
    assert.equal(methods.length, 13);
    for (const method of methods) {
      const { pattern, body } = getOption(method, http);
      assert.ok(pattern.case !== undefined && pattern.case !== "custom", method.name);
      const path = pattern.value.replace(/\{[^}]+\}/g, "s1");
      const response = await fetch(`${restUrl}${path}`, {
        method: pattern.case.toUpperCase(),
        ...(body === "" ? {} : { headers: { "content-type": "application/json" }, body: "{}" }),
      });
      const where = `${pattern.case.toUpperCase()} ${path}`;
      assert.equal(response.status, 501, where);
      assert.match(String(response.headers.get("content-type")), /^application\/json/, where);
      assert.deepEqual(
        await response.json(),
        {
          code: "Unimplemented",
          message: `memory.v1.MemoryService.${method.name} is not implemented`,
        },
        where,
      );
    }
  });

  it("answers UNIMPLEMENTED to an independent gRPC client for every RPC", async () => {
    for (const method of methods) {
      const error = await new Promise<grpc.ServiceError | null>((resolve) =>
        client[method.name]({}, (err) => resolve(err)),
      );
      assert.equal(error?.code, grpc.status.UNIMPLEMENTED, method.name);
    }
  });
});
