// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${PLACEHOLDER} text is manifest syntax, not a template
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type FakeSecretManager, startFakeSecretManager } from "@atrium/broker/testing";
import { runAtriumctl } from "../testing/run-cli.js";

describe("gcpsm secret source against a local Secret Manager gRPC server", () => {
  let stub: FakeSecretManager;
  let file: string;
  before(async () => {
    stub = await startFakeSecretManager();
    stub.secrets.set("projects/proj/secrets/atrium-client-secret", [
      Buffer.from("from-secret-manager"),
    ]);
    const dir = await mkdtemp(join(tmpdir(), "atriumctl-gcpsm-"));
    file = join(dir, "m.yaml");
    await writeFile(
      file,
      [
        "providers:",
        "  - name: github",
        "    auth_type: oauth2",
        "    client_id: ${GITHUB_CLIENT_ID}",
        "    client_secret: ${GITHUB_CLIENT_SECRET}",
        "    issuer: https://github.example.com",
        "",
      ].join("\n"),
    );
  });
  after(() => stub.close());

  it("reads the latest version by derived id and falls back to the environment", async () => {
    const args = ["validate", "-file", file, "-secrets", "gcpsm:proj", "-secret-prefix", "atrium"];
    const env = { ATRIUM_GCPSM_ENDPOINT: stub.endpoint, GITHUB_CLIENT_ID: "client-from-env" };
    const result = await runAtriumctl(args, env);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(stub.accessed.sort(), [
      "projects/proj/secrets/atrium-client-id/versions/latest",
      "projects/proj/secrets/atrium-client-secret/versions/latest",
    ]);

    const strict = await runAtriumctl([...args, "-require-encrypted-secrets"], env);
    assert.equal(strict.code, 1);
    assert.match(
      strict.stderr,
      /m\.yaml:4: unresolved placeholder \$\{GITHUB_CLIENT_ID\} in client_id: not found in secret manager project proj\n/,
    );
  });
});
