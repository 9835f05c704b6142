import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

export interface SecretManagerStub {
  endpoint: string;
  /** Full secret names (`projects/p/secrets/id`) → latest payload. */
  secrets: Map<string, string>;
  accessed: string[];
  close(): Promise<void>;
}

/**
 * Serves AccessSecretVersion of google.cloud.secretmanager.v1 over plaintext gRPC, from the
 * protos the client library ships, so the real client talks to it unchanged.
 */
export async function startSecretManagerStub(): Promise<SecretManagerStub> {
  const require = createRequire(import.meta.url);
  const libraryRoot = dirname(dirname(require.resolve("@google-cloud/secret-manager")));
  const gaxRoot = dirname(
    dirname(createRequire(join(libraryRoot, "src/index.js")).resolve("google-gax")),
  );
  const definition = protoLoader.loadSync("google/cloud/secretmanager/v1/service.proto", {
    includeDirs: [join(libraryRoot, "protos"), join(gaxRoot, "protos")],
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    google: {
      cloud: {
        secretmanager: { v1: { SecretManagerService: { service: grpc.ServiceDefinition } } };
      };
    };
  };
  const stub: SecretManagerStub = {
    endpoint: "",
    secrets: new Map(),
    accessed: [],
    close: async () => {},
  };
  const server = new grpc.Server();
  server.addService(loaded.google.cloud.secretmanager.v1.SecretManagerService.service, {
    AccessSecretVersion(
      call: { request: { name: string } },
      done: (error: Partial<grpc.ServiceError> | null, value?: unknown) => void,
    ) {
      const name = call.request.name;
      stub.accessed.push(name);
      const secret = name.replace(/\/versions\/latest$/, "");
      const payload = stub.secrets.get(secret);
      if (payload === undefined)
        return done({ code: grpc.status.NOT_FOUND, details: `${name} not found` });
      done(null, { name: `${secret}/versions/1`, payload: { data: Buffer.from(payload) } });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  stub.endpoint = `127.0.0.1:${port}`;
  stub.close = () => new Promise((resolve) => server.tryShutdown(() => resolve()));
  return stub;
}
