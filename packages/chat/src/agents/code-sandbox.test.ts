import assert from "node:assert/strict";
import { test } from "node:test";
import { runInSandbox } from "./code-sandbox.js";

test("runs code and captures console output and the last value", async () => {
  const r = await runInSandbox("console.log('sum', [1,2,3].reduce((a,b)=>a+b)); 6*7");
  assert.equal(r.ok, true);
  assert.equal(r.output, "sum 6\n");
  assert.equal(r.result, "42");
});

test("reports thrown errors", async () => {
  const r = await runInSandbox("throw new TypeError('nope')");
  assert.equal(r.ok, false);
  assert.match(r.error ?? "", /TypeError: nope/);
});

test("has no require, process or environment", async () => {
  const r = await runInSandbox("console.log(typeof require, typeof process, typeof fetch)");
  assert.equal(r.output, "undefined undefined undefined\n");
});

test("stops an endless loop and an endless promise", async () => {
  const loop = await runInSandbox("while (true) {}", { timeoutMs: 200 });
  assert.equal(loop.ok, false);
  assert.match(loop.error ?? "", /timed out/);
  const pending = await runInSandbox("new Promise(() => {})", { timeoutMs: 200 });
  assert.equal(pending.ok, false);
  assert.match(pending.error ?? "", /never settled|timed out/);
});

test("stops code that exhausts its heap", async () => {
  const r = await runInSandbox("const a = []; while (true) a.push(new Array(1e5).fill(1));", {
    memoryMb: 32,
    timeoutMs: 20_000,
  });
  assert.equal(r.ok, false);
  assert.match(r.error ?? "", /memory limit|timed out/);
});
