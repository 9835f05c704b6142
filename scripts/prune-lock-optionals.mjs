#!/usr/bin/env node
// The npm registry reachable here serves only this platform's builds of packages such as
// @biomejs/biome and @bufbuild/buf, so npm writes a lockfile that names their other-platform
// optional dependencies without entries for them, and `npm ci` then refuses that lockfile
// (npm/cli#4828). This drops, from each lock entry, optional dependencies that have no entry
// anywhere in the lock. Run it after `npm install`; `--check` only reports (exit 1 if needed).
import { readFileSync, writeFileSync } from "node:fs";

const path = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8"));
const present = new Set(
  Object.keys(lock.packages).map((key) => key.slice(key.lastIndexOf("node_modules/") + 13)),
);
const dropped = [];
for (const [key, entry] of Object.entries(lock.packages)) {
  if (!entry.optionalDependencies) continue;
  for (const name of Object.keys(entry.optionalDependencies)) {
    if (present.has(name)) continue;
    delete entry.optionalDependencies[name];
    dropped.push(`${key || "<root>"} -> ${name}`);
  }
  if (Object.keys(entry.optionalDependencies).length === 0) delete entry.optionalDependencies;
}
if (process.argv.includes("--check")) {
  if (dropped.length > 0) {
    console.error(
      `package-lock.json names optional dependencies it has no entry for:\n  ${dropped.join("\n  ")}\nrun: node scripts/prune-lock-optionals.mjs`,
    );
    process.exit(1);
  }
} else if (dropped.length > 0) {
  writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`dropped ${dropped.length} optional dependencies this registry does not serve`);
}
