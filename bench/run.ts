// `make bench`: runs every bench/<name>/<name>-bench.ts one after another (they measure the
// machine, so never in parallel). Arguments filter by name: `make bench ARGS=broker`.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const filters = process.argv.slice(2);
const benches = readdirSync(join(root, "bench"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== "results")
  .map((entry) => join("bench", entry.name, `${entry.name}-bench.ts`))
  .filter((file) => existsSync(join(root, file)))
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)));

let failed = 0;
for (const file of benches) {
  console.log(`\n== ${file}`);
  const run = spawnSync(process.execPath, ["--conditions=atrium-source", "--import", "tsx", file], {
    cwd: root,
    stdio: "inherit",
  });
  if (run.status !== 0) failed++;
}
console.log(
  `\n${benches.length - failed} benchmarks finished, ${failed} failed; results in bench/results/`,
);
process.exit(failed === 0 ? 0 : 1);
