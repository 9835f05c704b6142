// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${PLACEHOLDER} text is manifest syntax, not a template
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type FakeBroker, startFakeBroker } from "./testing/fake-broker.js";
import { runAtriumctl } from "./testing/run-cli.js";
import { writeTempFiles as tempDir } from "./testing/temp-files.js";

describe("atriumctl with many providers (in-memory broker)", () => {
  let broker: FakeBroker;
  before(async () => {
    broker = await startFakeBroker();
  });
  after(() => broker.close());
  const env = () => ({ ATRIUM_BROKER_URL: broker.url, ATRIUM_BROKER_API_KEY: broker.apiKey });

  it("plans and applies a 200-provider directory with a bounded worker pool", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 200; i++) {
      const name = `p${String(i).padStart(3, "0")}`;
      files[`many/${name}.yaml`] =
        `name: ${name}\nauth_type: api_key\ndescription: provider ${i}\n`;
    }
    const dir = await tempDir(files);
    const file = join(dir, "many");
    broker.providers.set("old", { id: "old", name: "old", auth_type: "api_key" });
    const plan = await runAtriumctl(["plan", "-file", file, "-prune"], env());
    assert.equal(plan.code, 2, plan.stderr);
    assert.match(plan.stdout, /Plan: 200 to add, 0 to change, 1 to delete\./);
    broker.maxInFlight = 0;
    const applied = await runAtriumctl(
      ["apply", "-file", file, "-prune", "-auto-approve", "-parallelism", "4"],
      env(),
    );
    assert.equal(applied.code, 0, applied.stderr);
    assert.ok(
      broker.maxInFlight <= 4 && broker.maxInFlight > 1,
      `in flight: ${broker.maxInFlight}`,
    );
    assert.equal(broker.providers.size, 200);
    const again = await runAtriumctl(["plan", "-file", file], env());
    assert.equal(again.code, 0, again.stdout);
  });

  it("refuses env secrets for plan under the policy and reports unreachable brokers as errors", async () => {
    const dir = await tempDir({ "p/aaa.yaml": "name: aaa\nauth_type: api_key\n" });
    const policy = await runAtriumctl(
      ["plan", "-file", join(dir, "p"), "-require-encrypted-secrets"],
      env(),
    );
    assert.equal(policy.code, 1);
    assert.match(policy.stderr, /-secrets env is refused/);
    const down = await runAtriumctl(["plan", "-file", join(dir, "p")], {
      ATRIUM_BROKER_URL: "http://127.0.0.1:1",
      ATRIUM_BROKER_API_KEY: "k",
    });
    assert.equal(down.code, 1);
    assert.match(down.stderr, /broker unreachable/);
  });
});
