// node:test reporter that counts leaf tests and writes one line:
// `tests: N passed, N failed[, N skipped]`.
export default async function* summaryReporter(source) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { details, skip, todo } = event.data;
    if (details?.type === "suite" && event.type === "test:pass") continue;
    if (skip || todo) skipped++;
    else if (event.type === "test:pass") passed++;
    else failed++;
  }
  yield `tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`;
}
