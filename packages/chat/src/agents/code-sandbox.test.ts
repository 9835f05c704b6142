import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { runInSandbox } from "./code-sandbox.js";

test("runs code and captures console output and the last value", async () => {
  const r = await runInSandbox("console.log('sum', [1,2,3].reduce((a,b)=>a+b)); 6*7");
  assert.equal(r.ok, true);
  assert.equal(r.output, "sum 6\n");
  assert.equal(r.result, "42");
});

test("prints values as text and data as JSON, and awaits a returned promise", async () => {
  const r = await runInSandbox(
    "console.log('n', 1.5, null, undefined, {a: [1, 'b']}, 2n); Promise.resolve({done: true})",
  );
  assert.equal(r.ok, true);
  assert.equal(r.output, 'n 1.5 null undefined {"a":[1,"b"]} 2n\n');
  assert.equal(r.result, '{"done":true}');
  const text = await runInSandbox("'a' + 'b'");
  assert.equal(text.result, '"ab"');
});

test("reports thrown errors and rejected promises", async () => {
  const r = await runInSandbox("throw new TypeError('nope')");
  assert.equal(r.ok, false);
  assert.match(r.error ?? "", /TypeError: nope/);
  const rejected = await runInSandbox("Promise.reject(new RangeError('later'))");
  assert.equal(rejected.ok, false);
  assert.match(rejected.error ?? "", /RangeError: later/);
});

test("cuts the output at its limit, however the guest prints", async () => {
  const long = await runInSandbox("console.log('x'.repeat(100000))", { maxOutputChars: 100 });
  assert.equal(long.output, `${"x".repeat(100)}\n[output cut]`);
  // The guest replaces the functions the console uses: the host's own check still holds.
  const tampered = await runInSandbox(
    "String.prototype.slice = () => 'y'.repeat(100000); console.log('hi'); console.log('x'.repeat(5000))",
    { maxOutputChars: 100 },
  );
  assert.ok(tampered.output.length <= 100 + "\n[output cut]".length, tampered.output);
});

test("the guest's global object holds ECMAScript and console, nothing of Node", async () => {
  const r = await runInSandbox("Object.getOwnPropertyNames(globalThis)");
  const names: string[] = JSON.parse(r.result ?? "[]");
  assert.ok(names.includes("console") && names.includes("JSON"), r.result);
  for (const host of [
    "process",
    "require",
    "module",
    "Buffer",
    "fetch",
    "setTimeout",
    "queueMicrotask",
    "WebAssembly",
    "std",
    "os",
  ]) {
    assert.ok(!names.includes(host), `${host} is not a global`);
  }
});

// Escape attempts: each tries to reach the host's process and read a file, the value of its
// last expression. A data directory with a canary stands for the service's (data/dev.env under
// `make start`); /etc/hostname is too short to search for, so nothing may come back at all.
let dataDir = "";
let canary = "";
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "sandbox-data-"));
  canary = `canary-${randomBytes(8).toString("hex")}`;
  await writeFile(join(dataDir, "dev.env"), `ATRIUM_API_KEY=${canary}\n`);
});
after(() => rm(dataDir, { recursive: true, force: true }));

const read = (path: string) =>
  `.getBuiltinModule("fs").readFileSync(${JSON.stringify(path)}, "utf8")`;
const escapes: [string, (path: string) => string][] = [
  [
    "this.constructor.constructor",
    (p) => `this.constructor.constructor("return process")()${read(p)}`,
  ],
  [
    "globalThis.constructor.constructor",
    (p) => `globalThis.constructor.constructor("return process")()${read(p)}`,
  ],
  ["console.log.constructor", (p) => `console.log.constructor("return process")()${read(p)}`],
  [
    "an error's constructor chain",
    (p) => `try { null.x } catch (e) { e.constructor.constructor("return process")()${read(p)} }`,
  ],
  ["process.getBuiltinModule", (p) => `process${read(p)}`],
  ["process.binding", (p) => `process.binding("fs"); process${read(p)}`],
  [
    "process.mainModule.require",
    (p) => `process.mainModule.require("fs").readFileSync(${JSON.stringify(p)}, "utf8")`,
  ],
  ["require", (p) => `require("fs").readFileSync(${JSON.stringify(p)}, "utf8")`],
  [
    "import()",
    (p) => `import("node:fs").then((fs) => fs.readFileSync(${JSON.stringify(p)}, "utf8"))`,
  ],
  [
    "a static import",
    (p) => `import { readFileSync } from "node:fs"; readFileSync(${JSON.stringify(p)}, "utf8")`,
  ],
  ["eval", (p) => `eval('this.constructor.constructor("return process")()${read(p)}')`],
];

for (const [name, attempt] of escapes) {
  test(`escape through ${name} fails and reads no host file`, async () => {
    for (const path of [join(dataDir, "dev.env"), "/etc/hostname"]) {
      const r = await runInSandbox(attempt(path));
      const seen = JSON.stringify(r);
      assert.equal(r.ok, false, seen);
      assert.ok(!seen.includes(canary), `the data directory's canary leaked: ${seen}`);
      assert.equal(r.result, undefined, seen);
      assert.equal(r.output, "", seen);
    }
  });
}

test("fetch is not there, nor reachable through a constructor chain", async (t) => {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.end("reached");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  for (const code of [
    `fetch(${JSON.stringify(url)}).then((r) => r.text())`,
    `this.constructor.constructor("return fetch")()(${JSON.stringify(url)}).then((r) => r.text())`,
  ]) {
    const r = await runInSandbox(code);
    assert.equal(r.ok, false, JSON.stringify(r));
    assert.match(r.error ?? "", /ReferenceError: '?fetch'? is not defined/);
  }
  assert.equal(requests, 0);
});

test("stops an endless loop and an endless promise, and the host's event loop keeps running", async () => {
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 20);
  const loop = await runInSandbox("while (true) {}", { timeoutMs: 500 });
  clearInterval(ticker);
  assert.equal(loop.ok, false);
  assert.match(loop.error ?? "", /timed out after 500 ms/);
  assert.ok(ticks >= 10, `the host ticked ${ticks} times during the run`);
  const pending = await runInSandbox("new Promise(() => {})");
  assert.equal(pending.ok, false);
  assert.match(pending.error ?? "", /never settled/);
});

test("stops work QuickJS cannot interrupt at the deadline", async () => {
  // A backtracking regular expression runs inside one native call.
  const r = await runInSandbox("/(a+)+$/.test('a'.repeat(40) + 'b')", { timeoutMs: 300 });
  assert.equal(r.ok, false);
  assert.match(r.error ?? "", /timed out after 300 ms/);
  assert.ok(r.durationMs < 2000, `stopped after ${r.durationMs} ms`);
});

test("stops code that exhausts its memory", async () => {
  // Arrays grown by realloc, which QuickJS's own accounting misses: the wasm memory's cap holds.
  const arrays = await runInSandbox("const a = []; while (true) a.push(new Array(1e5).fill(1));", {
    memoryMb: 32,
    timeoutMs: 20_000,
  });
  assert.equal(arrays.ok, false);
  assert.match(arrays.error ?? "", /memory limit of 32 MB exceeded/);
  const strings = await runInSandbox(
    "const s = []; for (let i = 0; ; i++) s.push('x'.repeat(1 << 20) + i);",
    { memoryMb: 32, timeoutMs: 20_000 },
  );
  assert.equal(strings.ok, false);
  assert.match(strings.error ?? "", /memory limit of 32 MB exceeded/);
});

test("stops deep recursion with a stack overflow", async () => {
  const r = await runInSandbox("const f = (n) => f(n + 1) + 1; f(0)");
  assert.equal(r.ok, false);
  assert.match(r.error ?? "", /stack overflow/);
  const after = await runInSandbox("const g = (n) => (n === 0 ? 0 : 1 + g(n - 1)); g(500)");
  assert.equal(after.result, "500", "ordinary recursion still works");
});

test("an error whose message never ends to compute is a time-out, not a crash", async () => {
  const r = await runInSandbox(
    "const e = new Error('x'); Object.defineProperty(e, 'message', { get() { while (true) {} } }); throw e",
    { timeoutMs: 500 },
  );
  assert.equal(r.ok, false);
  assert.match(r.error ?? "", /timed out after 500 ms/);
});

test("an aborted signal terminates the worker at once", async () => {
  const abort = new AbortController();
  const started = performance.now();
  const running = runInSandbox("for (;;) {}", { timeoutMs: 30_000, signal: abort.signal });
  setTimeout(() => abort.abort(), 100);
  const r = await running;
  assert.equal(r.ok, false);
  assert.equal(r.error, "the run was cancelled");
  assert.ok(performance.now() - started < 2000, "well before the 30 s limit");
});
