// Issue 32's goal: a step yields for approval on agent host 1, is approved in the console
// (Chromium, through the gateway, which reaches agent host 2), and resumes on host 2; both hosts
// share one PostgreSQL and Redis, and the trace shows one pause and one resumption.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { TraceEvent } from "@atrium/chat";
import { consoleIsBuilt } from "@atrium/console";
import { startGatewayService } from "@atrium/gateway";
import { createLogger } from "@atrium/kit";
import { needsServer } from "@atrium/kit/testing";
import { startChatHosts, startTeamHook } from "./chat-hosts-harness.js";
import { artifacts, launchChromium } from "./console-harness.js";

const operatorKey = "approvals-operator-key";
const agentKey = "approvals-agent-key";

const agentCall = async (base: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      "x-api-key": agentKey,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

test("a step that yields on host 1 is approved in the console and resumes on host 2", async (t) => {
  if (!(await needsServer(t, "postgres")) || !(await needsServer(t, "redis"))) return;
  if (!consoleIsBuilt()) {
    assert.fail("the console is not bundled: npm run build -w @atrium/console");
  }
  const browser = await launchChromium(t);
  if (!browser) return;
  const hook = await startTeamHook(t);
  const [one, two] = await startChatHosts(t, {
    names: ["one", "two"],
    env: { ATRIUM_AGENT_API_KEY: agentKey, COMMUNICATOR_WEBHOOK_URL: hook.url },
  });
  // The console's gateway reaches host 2 only; the broker is not needed by these routes.
  const gateway = await startGatewayService({
    env: {
      GATEWAY_HOST: "127.0.0.1",
      GATEWAY_REST_PORT: "0",
      GATEWAY_GRPC_PORT: "0",
      BROKER_URL: "http://127.0.0.1:9",
      BROKER_GRPC_URL: "http://127.0.0.1:9",
      BROKER_API_KEY: "unused-broker-key",
      GATEWAY_REQUIRE_API_KEY: "true",
      GATEWAY_API_KEYS: operatorKey,
      AGENT_CHAT_URL: two.base,
      AGENT_API_KEY: agentKey,
    },
    logger: createLogger({ name: "approvals-gateway", level: "silent" }),
  });
  t.after(() => gateway.stop());

  const workflowId = `approve_${process.pid}_${Date.now()}`;
  const asked = await agentCall(one.base, "/chat", {
    message: "send a message to the team: the release is out",
    workflow_id: workflowId,
    context: { user_id: "ana", session_id: "s1" },
  });
  assert.equal(asked.status, 200);
  assert.equal(asked.body.status, "yield");
  const stepId = String(asked.body.step_id);
  const paused = await agentCall(one.base, `/chat/runs/${workflowId}/${stepId}`);
  const pausedOn = paused.body.host;

  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`${gateway.urls.rest}/console/#approvals`);
  await page.fill('input[name="operator-key"]', operatorKey);
  await page.click('button:has-text("Use key")');
  const card = page.locator(`li[data-run="${workflowId}/${stepId}"]`);
  await card.waitFor({ timeout: 10_000 });
  const shown = String(await card.textContent());
  assert.match(shown, /approval: sending this message needs approval/);
  assert.match(shown, /Asked by ana \(session s1\)/);
  assert.match(
    String(await card.locator("pre.draft").textContent()),
    /the release is out/,
    "the draft is shown",
  );
  assert.equal(hook.posts.length, 0, "nothing is sent before the approval");
  await page.screenshot({ path: join(artifacts, "approvals-waiting.png"), fullPage: true });

  await card.locator('button:has-text("Approve")').click();
  await card.waitFor({ state: "detached", timeout: 10_000 });
  const decided = page.locator(`tr[data-decided="${stepId}"]`);
  await decided.locator("td.status", { hasText: "completed" }).waitFor({ timeout: 15_000 });
  assert.match(String(await decided.textContent()), /approved\s*completed\s*by api key/);
  await page.screenshot({ path: join(artifacts, "approvals-decided.png"), fullPage: true });
  assert.deepEqual(errors, []);

  const run = await agentCall(one.base, `/chat/runs/${workflowId}/${stepId}`);
  assert.equal(run.body.status, "completed");
  const decisions = run.body.decisions as { decision: string; decided_by: string }[];
  assert.deepEqual(
    decisions.map((d) => [d.decision, d.decided_by]),
    [["approve", "api key"]],
  );
  const [hostOne, hostTwo] = await Promise.all(
    [one, two].map(async (host) => {
      // Host 2 answers for the run it resumed; host 1 reads the same record.
      const seen = await agentCall(host.base, `/chat/runs/${workflowId}/${stepId}`);
      return seen.body.host;
    }),
  );
  assert.equal(hostOne, hostTwo);
  assert.notEqual(hostTwo, pausedOn, "the step resumed on the other host");
  for (let i = 0; hook.posts.length === 0 && i < 100; i++) await sleep(20);
  assert.equal(hook.posts.length, 1, "the approved message was sent once");

  for (const host of [one, two]) {
    const history = await agentCall(host.base, `/chat/history/${workflowId}/${stepId}`);
    const events = history.body.events as TraceEvent[];
    const phases = events.filter((e) => e.type === "thinking").map((e) => e.data.phase);
    assert.equal(phases.filter((p) => p === "pause").length, 1, "one pause");
    assert.equal(phases.filter((p) => p === "resume").length, 1, "one resumption");
    assert.equal(phases.filter((p) => p === "orient").length, 1, "routed once, before the pause");
    assert.deepEqual(
      events.filter((e) => e.type === "tool_start").map((e) => e.data.tool),
      ["webhook.send"],
      "the message was sent once, after the approval",
    );
  }
});
