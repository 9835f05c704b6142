import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { eventually } from "@atrium/kit/testing";
import { artifacts, launchChromium, startAtrium } from "./console-harness.js";

// The console's Memory page: memory content is untrusted, so a stored message carrying a script
// and an onerror image must be shown as text and run nothing.
const tenant = "console-memory";
const hostile = `Remember <script>window.__pwned=1</script> and <img src=x onerror="window.__pwned=1"> for me`;

// biome-ignore lint/suspicious/noExplicitAny: JSON answers of the memory API, asserted on below
type Json = any;

async function memoryCall(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Json> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** A user whose memory has a chain with the hostile message, and a promoted, analysed graph. */
async function seed(memory: string) {
  const { session_id } = await memoryCall(memory, "POST", "/api/v1/sessions", {
    tenant_id: tenant,
    user_id: "alice",
    agent_id: "assistant",
  });
  const say = (user_message: string, agent_response?: string) =>
    memoryCall(memory, "POST", `/api/v1/sessions/${session_id}/interactions`, {
      user_message,
      ...(agent_response ? { agent_response } : {}),
    });
  await say(
    "Alice Johnson works at Acme Corp in Berlin with Bob Miller.",
    "Noted: Alice Johnson and Bob Miller work at Acme Corp.",
  );
  // A different topic closes the first chain, so it can be promoted into the graph.
  await say(hostile, "I will remember that.");
  const user = `tenant_id=${tenant}&user_id=alice`;
  await eventually(
    "the graph holds the analysed entities",
    async () => {
      await memoryCall(memory, "POST", "/api/v1/admin/analytics/trigger", {});
      const graph = await memoryCall(memory, "GET", `/api/v1/operator/graph?${user}`);
      return graph.nodes.some(
        (n: { name: string; community: number | null }) =>
          n.name === "Alice Johnson" && n.community !== null,
      );
    },
    30_000,
  );
  await eventually("both conversations are chains", async () => {
    const view = await memoryCall(memory, "GET", `/api/v1/operator/user?${user}`);
    return view.chains.some((c: { turns: { content: string }[] }) =>
      c.turns.some((t) => t.content === hostile),
    );
  });
}

test("the console's memory page shows a user's memory as text, draws the graph and explains search", async (t) => {
  const browser = await launchChromium(t);
  if (!browser) return;
  const dataDir = await mkdtemp(join(tmpdir(), "atrium-console-memory-"));
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  const atrium = await startAtrium(dataDir);
  t.after(() => atrium.stop());
  await seed(atrium.memory);

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const dialogs: string[] = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.accept();
  });
  const pwned = () => page.evaluate(() => (globalThis as { __pwned?: number }).__pwned);

  await page.goto(`${atrium.gateway}/console/#memory`);
  await page.getByLabel("Operator key").fill(atrium.operatorKey);
  await page.getByRole("button", { name: "Use key" }).click();
  await page.getByLabel("Tenant").fill(tenant);
  await page.getByRole("button", { name: "Find" }).click();
  await page.locator('tr[data-user="alice"]').getByRole("button", { name: "alice" }).click();

  // The STM window shows the hostile message as the text it is.
  const stm = page.locator('[data-scope="assistant"] ol.stm .content');
  await stm.first().waitFor();
  assert.ok((await stm.allTextContents()).includes(hostile));
  // The chain expands to the turns it came from, the hostile one among them, as text.
  const chain = page.locator("details.chain").filter({ hasText: "will remember" });
  await chain.locator("summary").click();
  const turns = await chain.locator("ol.turns .content").allTextContents();
  assert.deepEqual(turns, [hostile, "I will remember that."]);
  assert.equal(await page.locator("main script, main img").count(), 0);
  assert.equal(await pwned(), undefined);

  // The graph is drawn; a node's facts appear on click.
  await page
    .locator("svg.graph")
    .getByRole("button", { name: /^Alice Johnson(, bridge)?$/ })
    .click();
  const facts = page.getByRole("complementary", { name: "Entity facts" });
  await facts.getByRole("heading", { name: /Alice Johnson/ }).waitFor();
  assert.match((await facts.textContent()) ?? "", /Acme Corp|Bob Miller/);
  assert.ok((await page.locator("svg.graph line.edge").count()) > 0);

  // Search shows what SearchMemory returns and why.
  await page.getByLabel("Query").fill("Where does Alice Johnson work?");
  await page.getByRole("button", { name: "Search" }).click();
  const first = page.locator("table.search-results tbody tr").first();
  await first.waitFor();
  const cells = await first.locator("td").allTextContents();
  assert.equal(cells[2], "1", `lexical rank: ${cells.join(" | ")}`);
  assert.match(cells[4], /^dialogue_page/);
  assert.match(cells[5], /Acme Corp/);

  await page.screenshot({ path: join(artifacts, "memory-1280.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  // Usable on a phone: nothing makes the page wider than the screen (tables scroll in place).
  const pageWidth = await page.evaluate(
    () =>
      (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
        .documentElement.scrollWidth,
  );
  assert.ok(pageWidth <= 390, `the page is ${pageWidth} px wide`);
  await page.screenshot({ path: join(artifacts, "memory-390.png"), fullPage: true });
  assert.equal(await pwned(), undefined);
  assert.deepEqual(dialogs, []);
});
