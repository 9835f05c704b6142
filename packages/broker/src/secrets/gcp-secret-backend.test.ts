import assert from "node:assert/strict";
import { test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { startFakeSecretManager } from "../testing/fake-secret-manager.js";
import { createGcpSecretBackend } from "./gcp-secret-backend.js";

test("gcp backend: one secret per provider, immutable version references, delete", async (t) => {
  const fake = await startFakeSecretManager();
  const backend = createGcpSecretBackend({
    project: "atrium-test",
    prefix: "atrium-broker",
    clientOptions: {
      apiEndpoint: "127.0.0.1",
      port: fake.port,
      sslCreds: grpc.credentials.createInsecure(),
      universeDomain: "googleapis.com",
    },
  });
  t.after(async () => {
    await backend.close();
    await fake.close();
  });

  await backend.check();
  const first = await backend.put("p1", "secret-one");
  assert.equal(first.ref, "projects/atrium-test/secrets/atrium-broker-p1/versions/1");
  const second = await backend.put("p1", "secret-two");
  assert.equal(second.ref, "projects/atrium-test/secrets/atrium-broker-p1/versions/2");
  // A reference keeps reading its own version while a rotation adds newer ones.
  assert.equal(await backend.read("p1", first), "secret-one");
  assert.equal(await backend.read("p1", second), "secret-two");
  assert.equal(fake.secrets.size, 1);
  assert.equal(await backend.remove("p1"), true);
  assert.equal(await backend.remove("p1"), false);
  await assert.rejects(backend.read("p1", second));
});
