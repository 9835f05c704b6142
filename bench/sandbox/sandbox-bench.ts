// Start-up cost of one run of the coder's sandbox (QuickJS in WebAssembly, a fresh instance on a
// worker thread per run) beside two baselines measured in the same run, interleaved so that the
// machine's load falls on all three alike: the previous sandbox (a `vm` context inside a worker,
// kept here as it was, since it is no longer in the sources) and a bare worker that posts one
// message, the floor of anything run on its own thread. Each run evaluates `6 * 7`. Writes
// bench/results/sandbox.json.
//
//   node --conditions=atrium-source --import tsx bench/sandbox/sandbox-bench.ts
//   BENCH_RUNS=30 (runs of each)
import { mkdirSync, writeFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { runInSandbox } from "@atrium/chat";
import { percentile, round } from "../lib/load.js";

const runs = Number(process.env.BENCH_RUNS ?? 30);
const code = "6 * 7";

/** The sandbox before QuickJS: user code in a vm context inside a worker (not a boundary). */
const vmWorkerSource = `
const { parentPort, workerData } = require("node:worker_threads");
const vm = require("node:vm");
const { inspect } = require("node:util");
const context = vm.createContext({ console }, { codeGeneration: { strings: false, wasm: false } });
const value = vm.runInContext(workerData.code, context, { timeout: 5000, filename: "sandbox.js" });
parentPort.postMessage({ ok: true, result: inspect(value) });
`;

function inWorker(source: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, {
      eval: true,
      env: {},
      execArgv: [],
      workerData: { code },
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    });
    worker.once("message", (message: { result: string }) => {
      void worker.terminate();
      resolve(message.result);
    });
    worker.once("error", reject);
  });
}

const paths: { path: string; run: () => Promise<string | undefined> }[] = [
  {
    path: "QuickJS (wasm) on a worker, per run",
    run: async () => (await runInSandbox(code)).result,
  },
  { path: "baseline: vm context on a worker (before)", run: () => inWorker(vmWorkerSource) },
  {
    path: "baseline: bare worker, one message",
    run: () =>
      inWorker(`require("node:worker_threads").parentPort.postMessage({ result: String(6 * 7) })`),
  },
];

const samples = paths.map(() => [] as number[]);
for (const path of paths) {
  const warm = await path.run();
  if (warm !== "42") throw new Error(`${path.path} answered ${warm}`);
}
for (let i = 0; i < runs; i++) {
  for (const [index, path] of paths.entries()) {
    const began = performance.now();
    await path.run();
    samples[index].push(performance.now() - began);
  }
}
const rows = paths.map((path, index) => {
  const sorted = samples[index].sort((a, b) => a - b);
  return {
    path: path.path,
    runs,
    p50_ms: round(percentile(sorted, 50)),
    p99_ms: round(percentile(sorted, 99)),
    mean_ms: round(sorted.reduce((a, b) => a + b, 0) / sorted.length),
  };
});
console.table(rows);
mkdirSync(new URL("../results", import.meta.url), { recursive: true });
writeFileSync(
  new URL("../results/sandbox.json", import.meta.url),
  `${JSON.stringify({ at: new Date().toISOString(), code, rows }, null, 2)}\n`,
);
