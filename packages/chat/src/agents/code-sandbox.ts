import { Worker } from "node:worker_threads";

export interface SandboxLimits {
  /** Wall-clock limit for the whole run, including asynchronous work. Default 5 s. */
  timeoutMs?: number;
  /** V8 old-generation heap of the worker. Default 64 MB. */
  memoryMb?: number;
  /** Console output kept; the rest is cut. Default 64 KB. */
  maxOutputChars?: number;
}

export interface SandboxResult {
  ok: boolean;
  /** What the code printed with console.*, one line per call. */
  output: string;
  /** The value of the last expression, inspected, when the code did not throw. */
  result?: string;
  error?: string;
  durationMs: number;
}

// Runs inside the worker (CommonJS eval). The user code gets a fresh vm context with only a
// console; no require, process or timers. The worker adds a heap limit and can be killed.
const workerSource = `
const { parentPort, workerData } = require("node:worker_threads");
const vm = require("node:vm");
const { inspect } = require("node:util");
let output = "";
const limit = workerData.maxOutputChars;
const print = (args) => {
  if (output.length >= limit) return;
  output += args.map((a) => (typeof a === "string" ? a : inspect(a, { depth: 4 }))).join(" ") + "\\n";
  if (output.length > limit) output = output.slice(0, limit) + "\\n[output cut]";
};
const console = { log: (...a) => print(a), info: (...a) => print(a), warn: (...a) => print(a), error: (...a) => print(a) };
const context = vm.createContext({ console }, { codeGeneration: { strings: false, wasm: false } });
const finish = (message) => parentPort.postMessage({ output, ...message });
try {
  const value = vm.runInContext(workerData.code, context, { timeout: workerData.timeoutMs, filename: "sandbox.js" });
  Promise.resolve(value).then(
    (v) => finish({ ok: true, result: v === undefined ? undefined : inspect(v, { depth: 4 }) }),
    (e) => finish({ ok: false, error: String((e && e.stack) || e) }),
  );
} catch (e) {
  finish({ ok: false, error: String((e && e.stack) || e) });
}
`;

/**
 * Runs JavaScript in a worker thread with a heap limit and a wall-clock timeout. This contains
 * runaway loops and memory, not a hostile author: a vm context is not a security boundary
 * (isolated-vm would be, but needs Node 22). The worker gets an empty environment, so secrets in
 * the host's environment are not visible to it.
 */
export function runInSandbox(code: string, limits: SandboxLimits = {}): Promise<SandboxResult> {
  const timeoutMs = limits.timeoutMs ?? 5000;
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const worker = new Worker(workerSource, {
      eval: true,
      env: {},
      workerData: { code, timeoutMs, maxOutputChars: limits.maxOutputChars ?? 65_536 },
      resourceLimits: {
        maxOldGenerationSizeMb: limits.memoryMb ?? 64,
        maxYoungGenerationSizeMb: 16,
        stackSizeMb: 4,
      },
      stdout: true,
      stderr: true,
    });
    const settle = (result: Omit<SandboxResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve({ ...result, durationMs: Math.round(performance.now() - started) });
    };
    const timer = setTimeout(
      () => settle({ ok: false, output: "", error: `timed out after ${timeoutMs} ms` }),
      timeoutMs,
    );
    worker.once("message", (message: Omit<SandboxResult, "durationMs">) => settle(message));
    worker.once("error", (error: Error & { code?: string }) =>
      settle({
        ok: false,
        output: "",
        error:
          error.code === "ERR_WORKER_OUT_OF_MEMORY"
            ? `memory limit of ${limits.memoryMb ?? 64} MB exceeded`
            : error.message,
      }),
    );
    worker.once("exit", (code) =>
      settle({
        ok: false,
        output: "",
        // Exit 0 before any message: the promise the code returned can never settle.
        error: code === 0 ? "the code's promise never settled" : `sandbox exited with code ${code}`,
      }),
    );
  });
}
