import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { artifacts, launchChromium, startAtrium } from "./console-harness.js";

const brokerKey = "console-test-broker-key";
const operatorKey = "operator-secret-key";
const xssWorkspace = `ws-<img src=x onerror="window.__xss=1">-<script>window.__xss=2</script>`;

interface BrokerAnswer {
  id: string;
  events: unknown[];
}

async function brokerCall(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<BrokerAnswer> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { "x-api-key": brokerKey, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as BrokerAnswer;
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

test("the console lists, escapes and revokes connections; shows providers, audit, webhook deliveries (and sends a failed one again) and traces", async (t) => {
  const browser = await launchChromium(t);
  if (!browser) return;
  const dataDir = await mkdtemp(join(tmpdir(), "atrium-console-"));
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  const atrium = await startAtrium(dataDir, {
    API_KEYS: brokerKey,
    // Webhook subscriptions need a keyed gateway; the receiver below is on loopback http.
    GATEWAY_REQUIRE_API_KEY: "true",
    GATEWAY_API_KEYS: operatorKey,
    WEBHOOK_ALLOW_HTTP_LOOPBACK: "true",
    WEBHOOK_RETRY_BASE_MS: "100",
    WEBHOOK_POLL_INTERVAL_MS: "50",
    // Short enough that a receiver that keeps failing leaves a failed delivery to redeliver.
    WEBHOOK_RETRY_WINDOW_SECONDS: "2",
  });
  t.after(() => atrium.stop());

  /** A webhook receiver answering each delivery with `status()`, subscribed as `name`. */
  const subscribeReceiver = async (name: string, eventTypes: string[], status: () => number) => {
    const receiver = createServer((_request, response) => {
      response.statusCode = status();
      response.end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    t.after(() => receiver.close());
    return brokerCall(atrium.broker, "POST", "/webhooks", {
      name,
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      event_types: eventTypes,
    });
  };
  // A receiver that fails its first delivery, so the console has a retry to show.
  let received = 0;
  const webhook = await subscribeReceiver(
    "ops-alerts",
    ["connection.created", "connection.revoked"],
    () => {
      received += 1;
      return received === 1 ? 500 : 204;
    },
  );
  // A receiver that is down until the test fixes it: its deliveries fail for good, then one is
  // sent again from the console.
  let pagerUp = false;
  let pagerAccepted = 0;
  const pagerHook = await subscribeReceiver("ops-pager", ["connection.created"], () => {
    if (!pagerUp) return 503;
    pagerAccepted += 1;
    return 204;
  });

  // The provider's user-info endpoint, which the broker calls to validate a captured key.
  const userInfo = createServer((_request, response) => response.end("{}"));
  await new Promise<void>((resolve) => userInfo.listen(0, "127.0.0.1", resolve));
  t.after(() => userInfo.close());
  const provider = await brokerCall(atrium.broker, "POST", "/providers", {
    name: "console-static",
    auth_type: "api_key",
    user_info_endpoint: `http://127.0.0.1:${(userInfo.address() as AddressInfo).port}/me`,
  });
  const kept = await brokerCall(atrium.broker, "POST", "/connections/static", {
    provider_id: provider.id,
    workspace_id: "ws-console",
    api_key: "secret-kept",
  });
  const hostile = await brokerCall(atrium.broker, "POST", "/connections/static", {
    provider_id: provider.id,
    workspace_id: xssWorkspace,
    api_key: "secret-hostile",
  });

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const dialogs: string[] = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.accept();
  });
  const requestedUrls: string[] = [];
  page.on("request", (request) => requestedUrls.push(request.url()));

  const response = await page.goto(`${atrium.gateway}/console/`);
  assert.match(response?.headers()["content-security-policy"] ?? "", /frame-ancestors 'none'/);
  await page.getByLabel("Operator key").fill(operatorKey);
  await page.getByRole("button", { name: "Use key" }).click();

  const keptRow = page.locator(`tr[data-connection="${kept.id}"]`);
  const hostileRow = page.locator(`tr[data-connection="${hostile.id}"]`);
  await keptRow.waitFor();
  // The hostile workspace id is shown as the text it is, and none of it ran.
  assert.equal(await hostileRow.locator("td").nth(2).textContent(), xssWorkspace);
  assert.equal(await page.locator("tbody img, tbody script").count(), 0);
  assert.equal(await page.evaluate(() => (globalThis as { __xss?: number }).__xss), undefined);
  assert.deepEqual(dialogs, []);
  // The key never appears in a URL the console requests.
  assert.ok(requestedUrls.every((url) => !url.includes(operatorKey)));
  await page.screenshot({ path: join(artifacts, "credentials-1280.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(artifacts, "credentials-390.png"), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });

  await keptRow.getByRole("button", { name: "Revoke" }).click();
  await page
    .getByRole("status")
    .filter({ hasText: `Revoked ${kept.id}` })
    .waitFor();
  assert.equal(dialogs.length, 1);
  assert.match(dialogs[0], /^Revoke console-static connection /);
  assert.equal(await keptRow.locator("td.status").textContent(), "revoked");

  const audit = await brokerCall(
    atrium.broker,
    "GET",
    `/audit?event_type=connection.revoked&resource_id=${encodeURIComponent(kept.id)}`,
  );
  assert.equal(audit.events.length, 1, JSON.stringify(audit));
  assert.equal(await page.evaluate(() => (globalThis as { __xss?: number }).__xss), undefined);

  // Providers: the fingerprint, never a secret.
  await page.getByRole("button", { name: "Providers" }).click();
  const providerRow = page.locator(`tr[data-provider="${provider.id}"]`);
  await providerRow.waitFor();
  assert.equal(await providerRow.locator("td").first().textContent(), "console-static");
  await page.screenshot({ path: join(artifacts, "providers-1280.png"), fullPage: true });

  // Audit: the revoke made in the console, found by its filters.
  await page.getByRole("button", { name: "Audit" }).click();
  await page.getByLabel("Event type").fill("connection.revoked");
  await page.getByLabel("Resource id").fill(kept.id);
  await page.getByRole("button", { name: "Filter" }).click();
  await page.getByRole("status").filter({ hasText: "Events 1–1 of 1" }).waitFor();
  await page.locator("tr[data-audit]").first().waitFor();
  await page.screenshot({ path: join(artifacts, "audit-1280.png"), fullPage: true });

  // Webhooks: the subscription, and its deliveries with the failed first attempt.
  const deadline = Date.now() + 30_000;
  while (received < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.ok(received >= 3, `webhook deliveries received: ${received}`);
  await page.getByRole("button", { name: "Webhooks" }).click();
  await page.locator(`tr[data-webhook="${webhook.id}"]`).getByRole("button").click();
  const deliveries = page.locator("tr[data-delivery]");
  await deliveries.first().waitFor();
  const statuses = await page.locator("tr[data-delivery] td.status").allTextContents();
  assert.ok(statuses.includes("delivered"), statuses.join());
  const retried = page.locator("tr[data-delivery]", { hasText: "2 attempts" });
  await retried.getByRole("button").click();
  await page.locator("tr.sub", { hasText: "HTTP 500" }).waitFor();
  await page.locator("tr.sub", { hasText: "HTTP 204" }).waitFor();
  await page.screenshot({ path: join(artifacts, "webhooks-1280.png"), fullPage: true });

  // A delivery whose retry window ran out is sent again from the console, and arrives.
  const pagerDeliveries = async (status: string) =>
    (
      (await brokerCall(
        atrium.broker,
        "GET",
        `/webhooks/${pagerHook.id}/deliveries?status=${status}`,
      )) as { deliveries?: { id: string }[] }
    ).deliveries ?? [];
  /** Polls the broker until `found` holds (or 30 s pass). */
  const until = async (found: () => Promise<boolean>) => {
    const deadline = Date.now() + 30_000;
    while (!(await found()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  };
  await until(async () => (await pagerDeliveries("failed")).length > 0);
  const [failed] = await pagerDeliveries("failed");
  assert.ok(failed, "a delivery to the receiver that is down failed");
  await page.locator(`tr[data-webhook="${pagerHook.id}"]`).getByRole("button").click();
  await page.getByLabel("Status").selectOption("failed");
  const failedRow = page.locator(`tr[data-delivery="${failed.id}"]`);
  await failedRow.waitFor();
  pagerUp = true;
  await failedRow.getByRole("button", { name: "Redeliver" }).click();
  await page
    .getByRole("status")
    .filter({ hasText: `Delivery ${failed.id} is pending again` })
    .waitFor();
  assert.match(dialogs[1] ?? "", /^Send connection\.created delivery .* again\?$/);
  await until(async () =>
    (await pagerDeliveries("delivered")).some((delivery) => delivery.id === failed.id),
  );
  assert.ok(pagerAccepted > 0, "the redelivered event reached the receiver");
  await page.getByLabel("Status").selectOption("delivered");
  await page
    .locator(`tr[data-delivery="${failed.id}"] td.status`, { hasText: "delivered" })
    .waitFor();

  // Traces: a chat whose message is hostile markup, listed and shown as text.
  const chat = await fetch(`${atrium.agent}/api/v1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: `hello <img src=x onerror="window.__xss=3">`, user_id: "u1" }),
  });
  assert.equal(chat.status, 200, await chat.clone().text());
  const { workflow_id, step_id } = (await chat.json()) as { workflow_id: string; step_id: string };
  await page.getByRole("button", { name: "Traces" }).click();
  await page.locator(`li[data-workflow="${workflow_id}"]`).waitFor();
  await page.locator(`button[data-step="${step_id}"]`).click();
  await page.locator("ol.events li").first().waitFor();
  assert.match((await page.locator("ol.events").textContent()) ?? "", /<img src=x onerror=/);
  assert.equal(await page.locator("ol.events img, ol.events script").count(), 0);
  await page.screenshot({ path: join(artifacts, "traces-1280.png"), fullPage: true });

  // The live view, opened before the workflow runs: its events appear while POST /chat runs.
  const liveId = "wf_console_live";
  await page.getByLabel("Workflow id").fill(liveId);
  await page.getByRole("button", { name: "Watch live" }).click();
  await page.getByRole("status").filter({ hasText: "Live: live" }).waitFor();
  assert.equal(await page.locator("ol.events li").count(), 0);
  const live = await fetch(`${atrium.agent}/api/v1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: "what did I say?", user_id: "u1", workflow_id: liveId }),
  });
  assert.equal(live.status, 200, await live.clone().text());
  await page.locator("ol.events li.event-step_complete").waitFor();
  assert.ok((await page.locator("ol.events li").count()) > 1);
  await page.screenshot({ path: join(artifacts, "traces-live-1280.png"), fullPage: true });
  assert.equal(await page.evaluate(() => (globalThis as { __xss?: number }).__xss), undefined);
  assert.deepEqual(dialogs.slice(2), []);
});
