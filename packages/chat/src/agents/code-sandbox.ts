import { Worker } from "node:worker_threads";

export interface SandboxLimits {
  /** Wall-clock limit for the whole run, including asynchronous work. Default 5 s. */
  timeoutMs?: number;
  /** Memory of the guest's QuickJS heap; the wasm instance's linear memory is capped to it. Default 64 MB. */
  memoryMb?: number;
  /** Console output kept; the rest is cut. Default 64 KB. */
  maxOutputChars?: number;
}

export interface SandboxRunOptions extends SandboxLimits {
  /** Terminates the worker at once (a cancelled step). */
  signal?: AbortSignal;
}

export interface SandboxResult {
  ok: boolean;
  /** What the code printed with console.*, one line per call. */
  output: string;
  /** The value of the last expression (strings quoted, data as JSON), when the code did not throw. */
  result?: string;
  error?: string;
  durationMs: number;
}

/** What the worker posts: a result, or which limit stopped the run. */
interface WorkerReport {
  ok: boolean;
  output: string;
  result?: string;
  error?: string;
  timedOut?: boolean;
  outOfMemory?: boolean;
}

const workerFile = new URL("../../worker/code-sandbox-worker.mjs", import.meta.url);
/** QuickJS's own stack limit: well inside the worker's native stack, so QuickJS trips first. */
const guestStackBytes = 256 * 1024;
/** After the deadline the interpreter stops itself; this is how long it gets before terminate(). */
const killGraceMs = 100;

/**
 * Runs untrusted JavaScript in QuickJS compiled to WebAssembly, one fresh instance on its own
 * worker thread per run. The guest sees ECMAScript and a `console`, nothing of Node: no
 * process, require, import, fetch, timers or files, and its values reach the host only as
 * strings. QuickJS enforces the memory, stack and time limits; the worker adds a hard cap on
 * the wasm memory and is terminated when the deadline passes in a call QuickJS cannot
 * interrupt, so a runaway run never holds the host's event loop.
 */
export function runInSandbox(code: string, limits: SandboxRunOptions = {}): Promise<SandboxResult> {
  const timeoutMs = limits.timeoutMs ?? 5000;
  const memoryMb = limits.memoryMb ?? 64;
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const worker = new Worker(workerFile, {
      env: {},
      argv: [],
      execArgv: [],
      workerData: {
        code,
        deadline: Date.now() + timeoutMs,
        memoryBytes: memoryMb * 1024 * 1024,
        stackBytes: guestStackBytes,
        maxOutputChars: limits.maxOutputChars ?? 65_536,
      },
      // The worker's own JavaScript (the QuickJS bindings) needs little; the guest's heap is
      // the wasm memory, outside these limits.
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
      stdout: true,
      stderr: true,
    });
    const settle = (report: WorkerReport) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      limits.signal?.removeEventListener("abort", cancelled);
      void worker.terminate();
      const { timedOut, outOfMemory, ...result } = report;
      if (timedOut) result.error = `timed out after ${timeoutMs} ms`;
      if (outOfMemory) result.error = `memory limit of ${memoryMb} MB exceeded`;
      resolve({ ...result, durationMs: Math.round(performance.now() - started) });
    };
    const timer = setTimeout(
      () => settle({ ok: false, output: "", timedOut: true }),
      timeoutMs + killGraceMs,
    );
    function cancelled() {
      settle({ ok: false, output: "", error: "the run was cancelled" });
    }
    if (limits.signal?.aborted) cancelled();
    else limits.signal?.addEventListener("abort", cancelled, { once: true });
    worker.once("message", settle);
    worker.once("error", (error: Error & { code?: string }) =>
      settle(
        error.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? { ok: false, output: "", outOfMemory: true }
          : { ok: false, output: "", error: `the sandbox stopped: ${error.message}` },
      ),
    );
    worker.once("exit", (exitCode) =>
      settle({ ok: false, output: "", error: `the sandbox exited with code ${exitCode}` }),
    );
  });
}
