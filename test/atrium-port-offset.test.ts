import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { eventually } from "@atrium/kit/testing";
import { type AtriumProcess, freePortOffset, spawnAtriumStart } from "./atrium-start-env.js";

// Two platforms on one machine, the second with every port moved by ATRIUM_PORT_OFFSET=10000
// more than the first (the first sits at a free offset too, so a running `make start` is never
// in the way). Each one's chat must read its own memory: before the ports were wired through,
// the moved agent host read the other platform's memory on 9090.
const scope = { tenant_id: "acme", user_id: "ada" };

async function json(url: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200, `${url}: ${await response.clone().text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/** Stores the user's cat's name in the platform's memory and waits until search finds it. */
async function remember(memoryUrl: string, cat: string): Promise<void> {
  const base = `${memoryUrl}/api/v1`;
  const { session_id } = await json(`${base}/sessions`, { ...scope, agent_id: "pets" });
  await json(`${base}/sessions/${session_id}/interactions`, {
    user_message: `My cat is called ${cat}`,
    agent_response: "Noted.",
  });
  await eventually(`${cat} is searchable`, async () => {
    const found = await json(`${base}/sessions/${session_id}/context/search`, {
      query: "cat called",
    });
    return (found.results as unknown[]).length > 0;
  });
}

test("two platforms side by side, one moved by ATRIUM_PORT_OFFSET=10000: each chat reads its own memory", async (t) => {
  const base = await freePortOffset(10_000, 2);
  const platforms: { offset: number; cat: string; process?: AtriumProcess }[] = [
    { offset: base, cat: "Biscuit" },
    { offset: base + 10_000, cat: "Pepper" },
  ];
  t.after(async () => {
    for (const platform of platforms) await platform.process?.stop();
  });
  for (const platform of platforms) {
    const dataDir = await mkdtemp(join(tmpdir(), "atrium-offset-"));
    t.after(() => rm(dataDir, { recursive: true, force: true }));
    platform.process = await spawnAtriumStart({
      ATRIUM_DATA_DIR: dataDir,
      ATRIUM_PORT_OFFSET: String(platform.offset),
      LOG_LEVEL: "warn",
    });
    // The banner names the moved ports, and nothing is left at the defaults.
    assert.match(
      platform.process.output(),
      new RegExp(
        `memory {3}REST http://127\\.0\\.0\\.1:${8080 + platform.offset} {2}gRPC http://127\\.0\\.0\\.1:${9090 + platform.offset}`,
      ),
    );
  }
  for (const platform of platforms) {
    await remember(`http://127.0.0.1:${8080 + platform.offset}`, platform.cat);
  }
  for (const [i, platform] of platforms.entries()) {
    const other = platforms[1 - i];
    const answer = await json(`http://127.0.0.1:${8000 + platform.offset}/api/v1/chat`, {
      message: "What is my cat called?",
      context: { ...scope, role: "researcher" },
    });
    assert.equal(answer.status, "success", JSON.stringify(answer));
    assert.match(String(answer.answer), new RegExp(platform.cat));
    assert.doesNotMatch(String(answer.answer), new RegExp(other.cat));
  }
});
