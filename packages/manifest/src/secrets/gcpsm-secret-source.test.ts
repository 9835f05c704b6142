import assert from "node:assert/strict";
import { it } from "node:test";
import { createGcpsmSecretSource, gcpsmSecretId } from "./gcpsm-secret-source.js";

it("derives secret ids from placeholders", () => {
  assert.equal(gcpsmSecretId("GITHUB_CLIENT_SECRET", "github", ""), "client-secret");
  assert.equal(gcpsmSecretId("GITHUB_CLIENT_SECRET", "github", "atrium"), "atrium-client-secret");
  assert.equal(gcpsmSecretId("MY_IDP_CERT", "my-idp", "atrium-"), "atrium-cert");
  assert.equal(gcpsmSecretId("SHARED_TOKEN", "github", "p"), "p-shared-token");
});

it("reads the latest version and reports a missing secret as absent", async () => {
  const names: string[] = [];
  const source = createGcpsmSecretSource({
    project: "proj",
    secretPrefix: "atrium",
    client: {
      async accessSecretVersion({ name }) {
        names.push(name);
        if (name.includes("missing")) throw Object.assign(new Error("5 NOT_FOUND"), { code: 5 });
        return [{ payload: { data: Buffer.from("value") } }];
      },
    },
  });
  assert.deepEqual(await source.lookup("GITHUB_CLIENT_SECRET", "github"), {
    value: "value",
    plaintext: false,
  });
  assert.equal(await source.lookup("GITHUB_MISSING", "github"), undefined);
  assert.deepEqual(names, [
    "projects/proj/secrets/atrium-client-secret/versions/latest",
    "projects/proj/secrets/atrium-missing/versions/latest",
  ]);
});
