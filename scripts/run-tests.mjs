#!/usr/bin/env node
// Runs every *.test.ts under packages/*/src, test/ and tools/ with node's test runner (tsx for
// TypeScript, the atrium-source condition so workspace packages resolve to their sources), and
// then the Python and Go SDK suites (scripts/sdk-suites.mjs), and ends with the line
// `tests: N passed, N failed[, N skipped]` summed over all of them.
// Arguments filter the files by substring: `npm test -- kit/src/sql`; `sdks/go` picks a suite.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { sdkSuites } from "./sdk-suites.mjs";

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
const selected = (path) => filters.length === 0 || filters.some((x) => path.includes(x));
const files = roots
  .flatMap((d) => walk(d, []))
  .filter(selected)
  .sort();
const suites = sdkSuites.filter((suite) => selected(suite.path));

if (files.length === 0 && suites.length === 0) {
  console.error("no test files matched");
  console.log("tests: 0 passed, 1 failed");
  process.exit(1);
}

// Container suites (`*.container.test.ts`) build images and start stacks, minutes rather than
// seconds: they run after the others, one at a time, under their own timeout.
const containerFiles = files.filter((path) => path.endsWith(".container.test.ts"));
const otherFiles = files.filter((path) => !containerFiles.includes(path));

/** Names of the failed tests, printed again just above the last line. */
const failures = [];

/** Node's runner over TypeScript files; its counts as { passed, failed, skipped }. */
function runNodeTests(files, concurrency, timeoutMs) {
  if (files.length === 0) return Promise.resolve({ passed: 0, failed: 0, skipped: 0 });
  const summaryFile = join(mkdtempSync(join(tmpdir(), "atrium-tests-")), "summary.txt");
  const args = [
    "--conditions=atrium-source",
    "--import",
    "tsx",
    "--test",
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${timeoutMs}`,
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    `--test-reporter=${join(root, "scripts/summary-reporter.mjs")}`,
    `--test-reporter-destination=${summaryFile}`,
    ...files,
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: "inherit" });
    child.on("exit", (code, signal) => {
      let summary = "";
      try {
        summary = readFileSync(summaryFile, "utf8");
      } catch {
        // No summary: the runner itself failed.
      }
      const count = (word) => Number(new RegExp(`(\\d+) ${word}`).exec(summary)?.[1] ?? 0);
      const counts = {
        passed: count("passed"),
        failed: count("failed"),
        skipped: count("skipped"),
      };
      failures.push(...summary.split("\n").filter((line) => line.startsWith("failed: ")));
      // A runner that died without failing a test still fails the run.
      if (counts.failed === 0 && (code !== 0 || signal)) counts.failed = 1;
      resolve(counts);
    });
  });
}

const totals = await runNodeTests(
  otherFiles,
  process.env.TEST_CONCURRENCY ?? 2,
  process.env.TEST_TIMEOUT_MS ?? 180000,
);
const containers = await runNodeTests(
  containerFiles,
  1,
  process.env.TEST_CONTAINER_TIMEOUT_MS ?? 45 * 60_000,
);
for (const key of Object.keys(totals)) totals[key] += containers[key];
for (const suite of suites) {
  const counts = await suite.run(root);
  for (const key of Object.keys(totals)) totals[key] += counts[key];
}
const { passed, failed, skipped } = totals;
for (const line of failures) console.log(line);
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 ? 1 : 0);
