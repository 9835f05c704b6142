// node:test reporter that counts leaf tests and writes one line,
// `tests: N passed, N failed[, N skipped]`, then a `failed: file > test` line per failed test so
// the end of a long run names what failed (CI keeps only its tail).
import { relative } from "node:path";

export default async function* summaryReporter(source) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const failures = [];
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { details, skip, todo } = event.data;
    if (details?.type === "suite" && event.type === "test:pass") continue;
    // A suite fails when one of its tests did: that test is counted already.
    if (details?.type === "suite" && details.error?.failureType === "subtestsFailed") continue;
    if (skip || todo) skipped++;
    else if (event.type === "test:pass") passed++;
    else {
      failed++;
      const file = event.data.file ? relative(process.cwd(), event.data.file) : "?";
      failures.push(`failed: ${file} > ${event.data.name}\n`);
    }
  }
  yield `tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`;
  yield* failures;
}
