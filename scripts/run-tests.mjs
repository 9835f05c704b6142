#!/usr/bin/env node
// Runs every *.test.ts under packages/*/src, test/ and tools/ with node's test runner (tsx for
// TypeScript, the atrium-source condition so workspace packages resolve to their sources), and
// ends with the line `tests: N passed, N failed[, N skipped]`.
// Arguments filter the files by substring: `npm test -- kit/src/sql`.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const roots = ["packages", "test", "tools", "bench"].map((d) => join(root, d));

function walk(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    if (name === "node_modules" || name === "dist") continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith(".test.ts")) out.push(relative(root, path));
  }
  return out;
}

const filters = process.argv.slice(2);
const files = roots
  .flatMap((d) => walk(d, []))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();

if (files.length === 0) {
  console.error("no test files matched");
  console.log("tests: 0 passed, 1 failed");
  process.exit(1);
}

const summaryFile = join(mkdtempSync(join(tmpdir(), "atrium-tests-")), "summary.txt");
const args = [
  "--conditions=atrium-source",
  "--import",
  "tsx",
  "--test",
  `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`,
  `--test-timeout=${process.env.TEST_TIMEOUT_MS ?? 180000}`,
  "--test-reporter=spec",
  "--test-reporter-destination=stdout",
  `--test-reporter=${join(root, "scripts/summary-reporter.mjs")}`,
  `--test-reporter-destination=${summaryFile}`,
  ...files,
];
const child = spawn(process.execPath, args, { cwd: root, stdio: "inherit" });
child.on("exit", (code, signal) => {
  let summary = "";
  try {
    summary = readFileSync(summaryFile, "utf8").trim();
  } catch {
    summary = "tests: 0 passed, 1 failed";
  }
  console.log(summary);
  process.exit(code ?? (signal ? 1 : 0));
});
