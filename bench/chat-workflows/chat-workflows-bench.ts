// Listing recent workflows (GET /chat/workflows, what the console polls) on a traces directory
// that has grown: the trace bus's listing beside the simple baseline, reading the directory on
// every call (one readdir per workflow, one stat per step file), in the same run, with a trace
// event written to a random workflow before each listing. Writes bench/results/chat-workflows.json.
//
//   node --conditions=atrium-source --import tsx bench/chat-workflows/chat-workflows-bench.ts
//   BENCH_WORKFLOWS=5000 (workflows on disk, 3 steps each), BENCH_LISTINGS=200, BENCH_LIMIT=50
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createTraceBus } from "@atrium/chat";
import { percentile, round } from "../lib/load.js";

const workflowCount = Number(process.env.BENCH_WORKFLOWS ?? 5000);
const listings = Number(process.env.BENCH_LISTINGS ?? 200);
const limit = Number(process.env.BENCH_LIMIT ?? 50);
const baselineListings = Math.min(listings, 20);

const dir = mkdtempSync(join(tmpdir(), "chat-workflows-bench-"));
const workflowId = (i: number) => `wf_${i}`;
const start = Date.now() - workflowCount * 3_000;
console.log(`writing ${workflowCount} workflows × 3 steps into ${dir}`);
for (let i = 0; i < workflowCount; i++) {
  mkdirSync(join(dir, workflowId(i)));
  for (let s = 0; s < 3; s++) {
    const path = join(dir, workflowId(i), `step_${s}.jsonl`);
    writeFileSync(path, '{"type":"thinking"}\n');
    const at = new Date(start + i * 3_000 + s * 1_000);
    utimesSync(path, at, at);
  }
  if ((i + 1) % 1000 === 0) console.log(`  ${i + 1} of ${workflowCount}`);
}

/** The baseline: what a listing costs when it reads the directory each time. */
async function listByReadingDirectory(max: number): Promise<string[]> {
  const listed: { id: string; at: number }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const names = await readdir(join(dir, entry.name));
    const times = await Promise.all(
      names.map(async (name) => (await stat(join(dir, entry.name, name))).mtimeMs),
    );
    listed.push({ id: entry.name, at: Math.max(...times) });
  }
  return listed
    .sort((a, b) => b.at - a.at)
    .slice(0, max)
    .map((w) => w.id);
}

const bus = createTraceBus({ tracesDir: dir });
let written = 0;
const writeSomewhere = () =>
  bus
    .forStep(workflowId(Math.floor(Math.random() * workflowCount)), `step_new_${written++}`)
    .emit("thinking", { thought: "x" });

async function measure(runs: number, list: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    await writeSomewhere();
    const began = performance.now();
    await list();
    samples.push(performance.now() - began);
  }
  return samples.sort((a, b) => a - b);
}

try {
  const firstBegan = performance.now();
  await bus.workflows(limit);
  const firstMs = performance.now() - firstBegan;
  const indexed = await measure(listings, () => bus.workflows(limit));
  const baseline = await measure(baselineListings, () => listByReadingDirectory(limit));

  // Both must name the same workflows: the bench measures nothing if the listing is wrong. The
  // file system stamps writes of the same few milliseconds alike, so the last writes before the
  // comparison are spaced out, or the baseline's own order would be a coin toss between them.
  for (let i = 0; i < limit + 10; i++) {
    await writeSomewhere();
    await sleep(10);
  }
  const fromBus = (await bus.workflows(limit)).map((w) => w.workflow_id);
  const fromDirectory = await listByReadingDirectory(limit);
  const same =
    fromBus.length === fromDirectory.length && fromBus.every((id, i) => fromDirectory[i] === id);

  const rows = [
    {
      path: "trace bus, first listing (reads the directory)",
      calls: 1,
      p50: round(firstMs),
      p99: round(firstMs),
    },
    {
      path: "trace bus, later listings",
      calls: listings,
      p50: round(percentile(indexed, 50)),
      p99: round(percentile(indexed, 99)),
    },
    {
      path: "baseline: read the directory per listing",
      calls: baselineListings,
      p50: round(percentile(baseline, 50)),
      p99: round(percentile(baseline, 99)),
    },
  ];
  console.table(rows);
  console.log(
    `${workflowCount} workflows, ${workflowCount * 3 + written} step files; the two listings ${same ? "agree" : "DISAGREE"} on the ${limit} most recent workflows`,
  );
  mkdirSync(new URL("../results", import.meta.url), { recursive: true });
  writeFileSync(
    new URL("../results/chat-workflows.json", import.meta.url),
    `${JSON.stringify({ at: new Date().toISOString(), workflows: workflowCount, limit, rows, agree: same }, null, 2)}\n`,
  );
  if (!same) {
    console.log({ fromBus, fromDirectory });
    process.exitCode = 1;
  }
} finally {
  await bus.close();
  rmSync(dir, { recursive: true, force: true });
}
