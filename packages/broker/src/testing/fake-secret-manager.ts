import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

export interface FakeSecretManager {
  port: number;
  /** Secret name → versions' payloads, in order. */
  secrets: Map<string, Buffer[]>;
  /** RPC names in call order. */
  calls: string[];
  /** The version names AccessSecretVersion was asked for, in order. */
  accessed: string[];
  /** `host:port`, as a client's endpoint setting takes it. */
  endpoint: string;
  close(): Promise<void>;
}

type Callback = (error: Partial<grpc.ServiceError> | null, value?: unknown) => void;
type Call = { request: Record<string, unknown> };

/**
 * A local gRPC server implementing the part of google.cloud.secretmanager.v1.SecretManagerService
 * the broker uses, built from the protos the client library ships, so the real client talks to
 * it unchanged.
 */
export async function startFakeSecretManager(): Promise<FakeSecretManager> {
  const require = createRequire(import.meta.url);
  const libraryRoot = dirname(dirname(require.resolve("@google-cloud/secret-manager")));
  const gaxRoot = dirname(
    dirname(createRequire(join(libraryRoot, "src/index.js")).resolve("google-gax")),
  );
  const definition = protoLoader.loadSync("google/cloud/secretmanager/v1/service.proto", {
    includeDirs: [join(libraryRoot, "protos"), join(gaxRoot, "protos")],
    keepCase: false,
    longs: String,
    defaults: false,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    google: {
      cloud: {
        secretmanager: { v1: { SecretManagerService: { service: grpc.ServiceDefinition } } };
      };
    };
  };
  const secrets = new Map<string, Buffer[]>();
  const calls: string[] = [];
  const accessed: string[] = [];
  const notFound = (what: string) => ({
    code: grpc.status.NOT_FOUND,
    details: `${what} not found`,
  });

  const server = new grpc.Server();
  server.addService(loaded.google.cloud.secretmanager.v1.SecretManagerService.service, {
    CreateSecret(call: Call, done: Callback) {
      calls.push("CreateSecret");
      const name = `${call.request.parent}/secrets/${call.request.secretId}`;
      if (secrets.has(name)) return done({ code: grpc.status.ALREADY_EXISTS, details: "exists" });
      secrets.set(name, []);
      done(null, { name });
    },
    AddSecretVersion(call: Call, done: Callback) {
      calls.push("AddSecretVersion");
      const versions = secrets.get(String(call.request.parent));
      if (!versions) return done(notFound("secret"));
      versions.push(Buffer.from((call.request.payload as { data: Buffer }).data));
      done(null, { name: `${call.request.parent}/versions/${versions.length}`, state: "ENABLED" });
    },
    AccessSecretVersion(call: Call, done: Callback) {
      calls.push("AccessSecretVersion");
      accessed.push(String(call.request.name));
      const match = /^(.*)\/versions\/(\d+|latest)$/.exec(String(call.request.name));
      const versions = match ? secrets.get(match[1]) : undefined;
      const number = match?.[2] === "latest" ? (versions?.length ?? 0) : Number(match?.[2]);
      const data = versions?.[number - 1];
      if (!match || !data) return done(notFound(String(call.request.name)));
      done(null, { name: `${match[1]}/versions/${number}`, payload: { data } });
    },
    DeleteSecret(call: Call, done: Callback) {
      calls.push("DeleteSecret");
      if (!secrets.delete(String(call.request.name))) return done(notFound("secret"));
      done(null, {});
    },
    ListSecrets(call: Call, done: Callback) {
      calls.push("ListSecrets");
      const prefix = `${call.request.parent}/secrets/`;
      const names = [...secrets.keys()].filter((n) => n.startsWith(prefix));
      done(null, { secrets: names.map((name) => ({ name })), totalSize: names.length });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    port,
    endpoint: `127.0.0.1:${port}`,
    secrets,
    calls,
    accessed,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
      }),
  };
}
