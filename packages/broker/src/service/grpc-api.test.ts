import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTestPostgres, needsServer } from "@atrium/kit/testing";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { startTestBroker } from "../testing/test-broker.js";

type Unary = (
  request: Record<string, unknown>,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null, response?: Record<string, unknown>) => void,
) => void;

test("gRPC: an independent client over the same .proto gets the same auth and errors", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const pg = await createTestPostgres();
  const broker = await startTestBroker({ sql: pg.sql });
  const root = fileURLToPath(new URL("../../../../", import.meta.url));
  const definition = protoLoader.loadSync("broker/v1/broker.proto", {
    includeDirs: [`${root}proto`, `${root}node_modules/google-proto-files`],
    keepCase: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    broker: {
      v1: {
        BrokerService: new (address: string, credentials: grpc.ChannelCredentials) => grpc.Client;
      };
    };
  };
  const address = new URL(broker.service.urls.grpc as string).host;
  const client = new loaded.broker.v1.BrokerService(address, grpc.credentials.createInsecure());
  t.after(async () => {
    client.close();
    await broker.stop();
    await pg.drop();
  });
  const call = (method: string, request: Record<string, unknown>, key?: string) =>
    new Promise<{ error: grpc.ServiceError | null; response?: Record<string, unknown> }>(
      (resolve) => {
        const metadata = new grpc.Metadata();
        if (key) metadata.set("x-api-key", key);
        (client as unknown as Record<string, Unary>)[method].call(
          client,
          request,
          metadata,
          (error, response) => resolve({ error, response }),
        );
      },
    );

  assert.equal((await call("ListProviders", {})).error?.code, grpc.status.UNAUTHENTICATED);
  assert.equal((await call("ListProviders", {}, "wrong")).error?.code, grpc.status.UNAUTHENTICATED);
  const invalid = await call(
    "CreateProvider",
    { provider: { name: "x", auth_type: "nope" } },
    broker.apiKey,
  );
  assert.equal(invalid.error?.code, grpc.status.INVALID_ARGUMENT);
  const created = await call(
    "CreateProvider",
    {
      provider: {
        name: "grpc-keyed",
        auth_type: "api_key",
        api_base_url: "https://api.example.com",
      },
    },
    broker.apiKey,
  );
  assert.equal(created.error, null);
  assert.equal(created.response?.name, "grpc-keyed");
  // update_mask names what to change; other fields in the message are ignored.
  const updated = await call(
    "UpdateProvider",
    {
      id: created.response?.id,
      provider: { description: "via gRPC", api_base_url: "https://ignored.example.com" },
      update_mask: { paths: ["description"] },
    },
    broker.apiKey,
  );
  assert.equal(updated.error, null);
  assert.equal(updated.response?.description, "via gRPC");
  assert.equal(updated.response?.api_base_url, "https://api.example.com");
  const listed = await call("ListProviders", {}, broker.apiKey);
  assert.equal((listed.response?.providers as unknown[] | undefined)?.length, 1);
  const missing = await call("GetConnectionToken", { id: "no-such-connection" }, broker.apiKey);
  assert.equal(missing.error?.code, grpc.status.NOT_FOUND);
});
