import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { realServersRequired } from "@atrium/kit/testing";
import { BudgetTracker, defaultBudgets } from "../kernel/budget.js";
import type { StepContext } from "../kernel/step-context.js";
import { createTraceBus } from "../trace/trace-bus.js";
import { createBrowser, findChromium } from "./browser.js";
import { createUrlPolicy } from "./url-policy.js";

const page = `<html><head><title>Script page</title></head><body><main><p id="x">static</p></main>
<script>document.getElementById("x").textContent = "Rendered by script: otters juggle pebbles.";
fetch("http://blocked.invalid/beacon").catch(() => {});</script></body></html>`;

/** The system Chromium, or undefined when the test is skipped (on a developer machine). */
function chromiumFor(t: TestContext): string | undefined {
  const chromium = findChromium(process.env.CHROMIUM_PATH);
  if (!chromium) {
    // As with the real-server suites: skipped on a developer machine, a failure in CI.
    if (realServersRequired)
      assert.fail("no system Chromium (set CHROMIUM_PATH); CI=true requires it");
    t.skip("no system Chromium (set CHROMIUM_PATH)");
  }
  return chromium;
}

async function stepFor(t: TestContext, url: string, signal: AbortSignal): Promise<StepContext> {
  const dir = await mkdtemp(join(tmpdir(), "browser-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const bus = createTraceBus({ tracesDir: dir });
  t.after(() => bus.close());
  return {
    task: `open ${url}`,
    systemPrompt: "",
    context: {},
    agentId: "chat",
    scope: { tenantId: "t", userId: "u", agentId: "chat" },
    trace: bus.forStep("wf", "s"),
    signal,
    llm: undefined,
    memory: undefined,
    earlier: [],
    budget: new BudgetTracker(defaultBudgets.browser),
  };
}

test("the browser renders the page in the system Chromium", async (t) => {
  const chromium = chromiumFor(t);
  if (!chromium) return;
  const server = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "text/html" }).end(page),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const step = await stepFor(t, url, new AbortController().signal);
  const browser = createBrowser({ policy: createUrlPolicy(["127.0.0.1"]), chromiumPath: chromium });
  const result = await browser.run(step);
  assert.equal(result.status, "success");
  assert.match(result.summary, /^Script page: Rendered by script: otters juggle pebbles\./);
  assert.doesNotMatch(result.summary, /Note:/);
  assert.equal((result.payload as { via: string }).via, "chromium");
});

test("a cancelled step closes its browser instead of waiting for the page", async (t) => {
  const chromium = chromiumFor(t);
  if (!chromium) return;
  // A page that never answers: only the abort ends the navigation before its 30 s timeout.
  const server = createServer(() => undefined);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const abort = new AbortController();
  const step = await stepFor(
    t,
    `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    abort.signal,
  );
  const browser = createBrowser({ policy: createUrlPolicy(["127.0.0.1"]), chromiumPath: chromium });
  const running = browser.run(step);
  // Long enough for Chromium to start and the request to be in flight.
  await new Promise<void>((resolve) => server.once("request", () => resolve()));
  const asked = performance.now();
  abort.abort(new Error("cancelled by request"));
  await assert.rejects(running, /cancelled by request/);
  assert.ok(performance.now() - asked < 1000, "stopped within a second");
});
