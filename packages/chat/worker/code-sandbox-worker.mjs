// One run of the coder's sandbox, on its own worker thread: the guest's JavaScript runs in
// QuickJS compiled to WebAssembly, so it has no way to reach Node (its objects live in the
// wasm instance's linear memory; the only way out is the `print` function below, which takes a
// string). Plain JavaScript on purpose: Node 20 does not hand the tsx loader of a run from
// sources (the tests) on to worker threads, and this file needs nothing from the sources.
//
// Nothing is disposed at the end: the worker exits after its one message, and the wasm
// instance, its memory and every handle go with it.
import { parentPort, workerData } from "node:worker_threads";
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  RELEASE_SYNC,
  shouldInterruptAfterDeadline,
} from "quickjs-emscripten";

/** @type {{ code: string, deadline: number, memoryBytes: number, stackBytes: number, maxOutputChars: number }} */
const run = workerData;
const wasmPage = 65_536;
// The module asks for 16 MB of linear memory at start (its data, C stack and malloc arena).
// QuickJS's own limit does not count every allocation (arrays grown by realloc escape it), so
// the linear memory gets a hard maximum too: the guest's limit plus that start-up share.
const startupBytes = 16 * 1024 * 1024;

// Evaluated before the guest's code, so what it captures cannot be replaced by the guest.
// Values cross to the host only as strings made here: `describe` turns a value into text (JSON
// for data, name and message for errors) and `console.*` joins its arguments into one line.
const prelude = `(print, limit) => {
  const stringify = JSON.stringify;
  const text = String;
  const slice = Function.prototype.call.bind(String.prototype.slice);
  const isError = (value) => value instanceof Error;
  const json = (key, value) =>
    typeof value === "bigint" ? text(value) + "n"
    : typeof value === "function" ? "[Function " + (value.name || "(anonymous)") + "]"
    : value;
  const show = (value, quoteStrings) => {
    switch (typeof value) {
      case "string": return quoteStrings ? stringify(value) : value;
      case "bigint": return text(value) + "n";
      case "function": return "[Function " + (value.name || "(anonymous)") + "]";
      case "object":
        if (value === null) return "null";
        if (isError(value)) {
          const stack = typeof value.stack === "string" ? value.stack.trimEnd() : "";
          return text(value.name) + ": " + text(value.message) + (stack ? "\\n" + stack : "");
        }
        return stringify(value, json) ?? text(value);
      default: return text(value);
    }
  };
  const describe = (value, quoteStrings) => {
    try { return slice(show(value, quoteStrings), 0, limit + 1); }
    catch { return "[a value that could not be shown]"; }
  };
  const write = (...values) => {
    let line = "";
    for (let i = 0; i < values.length; i++) line += (i ? " " : "") + describe(values[i], false);
    print(slice(line, 0, limit + 1));
  };
  globalThis.console = { log: write, info: write, warn: write, error: write, debug: write };
  return describe;
}`;

let output = "";
const finish = (message) => parentPort.postMessage({ output, ...message });

try {
  const wasmMemory = new WebAssembly.Memory({
    initial: startupBytes / wasmPage,
    maximum: Math.ceil((startupBytes + run.memoryBytes) / wasmPage),
  });
  const quickjs = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory }));
  const runtime = quickjs.newRuntime();
  runtime.setMemoryLimit(run.memoryBytes);
  runtime.setMaxStackSize(run.stackBytes);
  // Polled by the interpreter between instructions; a long native call (a huge regex, a
  // string repeat) does not poll, which is what the host's terminate() is for.
  runtime.setInterruptHandler(shouldInterruptAfterDeadline(run.deadline));
  const context = runtime.newContext();

  const print = context.newFunction("print", (line) => {
    if (output.length >= run.maxOutputChars || context.typeof(line) !== "string") return;
    // The prelude cuts a line to the limit; a longer one means the guest got around it, and
    // is not copied out of the wasm memory at all.
    const length = context.getNumber(context.getProp(line, "length"));
    const whole = length <= run.maxOutputChars + 1;
    if (whole) output += `${context.getString(line)}\n`;
    if (!whole || output.length > run.maxOutputChars) {
      output = `${output.slice(0, run.maxOutputChars)}\n[output cut]`;
    }
  });
  const setUp = context.unwrapResult(context.evalCode(prelude, "prelude.js", { type: "global" }));
  const describeHandle = context.unwrapResult(
    context.callFunction(setUp, context.undefined, print, context.newNumber(run.maxOutputChars)),
  );
  /** The guest's own text for one of its values; never runs host code on the guest's behalf. */
  const describe = (handle, quoteStrings) => {
    const described = context.callFunction(
      describeHandle,
      context.undefined,
      handle,
      quoteStrings ? context.true : context.false,
    );
    if (described.error || context.typeof(described.value) !== "string") return undefined;
    return context.getString(described.value).slice(0, run.maxOutputChars);
  };
  const failure = (handle) => {
    if (Date.now() >= run.deadline) return { ok: false, timedOut: true };
    const text = describe(handle, false);
    // The prelude catches what showing a value throws, except QuickJS's own stops: the
    // deadline, which may pass while the value is shown, and memory.
    if (text === undefined && Date.now() >= run.deadline) return { ok: false, timedOut: true };
    if (text === undefined || /^InternalError: out of memory/.test(text)) {
      return { ok: false, outOfMemory: true };
    }
    return { ok: false, error: text };
  };

  const evaluated = context.evalCode(run.code, "sandbox.js", { type: "global" });
  if (evaluated.error) {
    finish(failure(evaluated.error));
  } else {
    // The code's promises settle through QuickJS's job queue; with no timers or I/O in the
    // guest, an empty queue means a pending promise can never settle.
    let jobError;
    for (;;) {
      const jobs = runtime.executePendingJobs();
      if (jobs.error) {
        jobError = jobs.error;
        break;
      }
      if (jobs.value === 0) break;
    }
    if (jobError) {
      finish(failure(jobError));
    } else {
      const state = context.getPromiseState(evaluated.value);
      if (state.type === "pending") {
        finish({ ok: false, error: "the code's promise never settled" });
      } else if (state.type === "rejected") {
        finish(failure(state.error));
      } else {
        const undefinedResult = context.typeof(state.value) === "undefined";
        finish({ ok: true, result: undefinedResult ? undefined : describe(state.value, true) });
      }
    }
  }
} catch (error) {
  // A trap in the wasm instance (out of linear memory in the middle of an allocation, the
  // native stack exhausted): the instance is unusable, the run failed.
  if (Date.now() >= run.deadline) finish({ ok: false, timedOut: true });
  else if (error instanceof RangeError && /call stack/.test(error.message)) {
    finish({ ok: false, error: "InternalError: stack overflow" });
  } else finish({ ok: false, error: `the sandbox stopped: ${error?.message ?? error}` });
}
