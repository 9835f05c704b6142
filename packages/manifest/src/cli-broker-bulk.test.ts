// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${PLACEHOLDER} text is manifest syntax, not a template
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type RealBroker, startRealBroker } from "./testing/real-broker.js";
import { runAtriumctl } from "./testing/run-cli.js";
import { writeTempFiles } from "./testing/temp-files.js";

async function providerDir(files: Record<string, string>): Promise<string> {
  const dir = await writeTempFiles(
    Object.fromEntries(Object.entries(files).map(([n, t]) => [`p/${n}`, t])),
  );
  return join(dir, "p");
}

describe("atriumctl with 200 providers against the real broker", () => {
  let broker: RealBroker;
  before(async () => {
    broker = await startRealBroker();
  });
  after(() => broker.service.stop());
  const env = (extra: Record<string, string> = {}) => broker.cliEnv(extra);

  it("plans and applies a 200-provider directory, then prunes the rest", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 200; i++) {
      const name = `svc-${String(i).padStart(3, "0")}`;
      files[`${name}.yaml`] =
        `name: ${name}\nauth_type: api_key\ncategory: bulk\ndescription: service ${i}\n`;
    }
    const file = await providerDir(files);
    for (const name of ["acme", "keys"]) {
      await broker.request("POST", "/providers", { name, auth_type: "api_key" });
    }
    const plan = await runAtriumctl(["plan", "-file", file, "-prune"], env());
    assert.equal(plan.code, 2, plan.stderr);
    assert.match(plan.stdout, /Plan: 200 to add, 0 to change, 2 to delete\./);
    assert.match(plan.stdout, / {2}- acme: delete .*\n {2}- keys: delete/);
    const applied = await runAtriumctl(["apply", "-file", file, "-prune", "-auto-approve"], env());
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /Apply: 202 of 202 changes applied\./);
    const listed = (await broker.request("GET", "/providers")).providers as unknown[];
    assert.equal(listed.length, 200);
    const again = await runAtriumctl(["plan", "-file", file], env());
    assert.equal(again.code, 0, again.stdout);
  });

  it("fails with exit 1 when the broker refuses the API key", async () => {
    const file = await providerDir({ "svc-000.yaml": "name: svc-000\nauth_type: api_key\n" });
    const wrongKey = await runAtriumctl(["plan", "-file", file], {
      ATRIUM_BROKER_URL: broker.url,
      ATRIUM_BROKER_API_KEY: "wrong",
    });
    assert.equal(wrongKey.code, 1);
    assert.match(wrongKey.stderr, /GET \/providers: 40[13]/);
  });
});
