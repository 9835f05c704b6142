import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { realServersRequired } from "@atrium/kit/testing";
import { BudgetTracker, defaultBudgets } from "../kernel/budget.js";
import type { StepContext } from "../kernel/step-context.js";
import { createTraceBus } from "../trace/trace-bus.js";
import { createBrowser, findChromium } from "./browser.js";
import { createUrlPolicy } from "./url-policy.js";

const page = `<html><head><title>Script page</title></head><body><main><p id="x">static</p></main>
<script>document.getElementById("x").textContent = "Rendered by script: otters juggle pebbles.";
fetch("http://blocked.invalid/beacon").catch(() => {});</script></body></html>`;

test("the browser renders the page in the system Chromium", async (t) => {
  const chromium = findChromium(process.env.CHROMIUM_PATH);
  if (!chromium) {
    // As with the real-server suites: skipped on a developer machine, a failure in CI.
    if (realServersRequired)
      assert.fail("no system Chromium (set CHROMIUM_PATH); CI=true requires it");
    t.skip("no system Chromium (set CHROMIUM_PATH)");
    return;
  }
  const server = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "text/html" }).end(page),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const dir = await mkdtemp(join(tmpdir(), "browser-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const bus = createTraceBus({ tracesDir: dir });
  t.after(() => bus.close());
  const step: StepContext = {
    task: `open ${url}`,
    systemPrompt: "",
    context: {},
    agentId: "chat",
    scope: { tenantId: "t", userId: "u", agentId: "chat" },
    trace: bus.forStep("wf", "s"),
    signal: new AbortController().signal,
    llm: undefined,
    memory: undefined,
    earlier: [],
    budget: new BudgetTracker(defaultBudgets.browser),
  };
  const browser = createBrowser({ policy: createUrlPolicy(["127.0.0.1"]), chromiumPath: chromium });
  const result = await browser.run(step);
  assert.equal(result.status, "success");
  assert.match(result.summary, /^Script page: Rendered by script: otters juggle pebbles\./);
  assert.doesNotMatch(result.summary, /Note:/);
  assert.equal((result.payload as { via: string }).via, "chromium");
});
