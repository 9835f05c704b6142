#!/usr/bin/env node
// Fails when any stamped file, the top heading of CHANGELOG.md or the newest git tag disagrees
// with the root VERSION file. Run `node scripts/stamp-version.mjs` to fix stamped files.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { readRootVersion, repoRoot, versionTargets } from "./stamp-version.mjs";

const root = repoRoot;
const version = readRootVersion(root);
const problems = [];

for (const target of versionTargets(root)) {
  for (const mismatch of target.mismatches(version)) {
    problems.push(`${relative(root, target.file)}: ${mismatch}`);
  }
}

const changelog = join(root, "CHANGELOG.md");
if (existsSync(changelog)) {
  const heading = readFileSync(changelog, "utf8")
    .split("\n")
    .find((line) => line.startsWith("## "));
  const match = /^## \[?v?([^\]\s]+)\]?(?:\s+-\s+\d{4}-\d{2}-\d{2})?\s*$/.exec(heading ?? "");
  if (!match)
    problems.push(
      `CHANGELOG.md: top heading must be "## ${version} - YYYY-MM-DD", got ${JSON.stringify(heading ?? "")}`,
    );
  else if (match[1] !== version) problems.push(`CHANGELOG.md: top heading is ${match[1]}`);
} else {
  problems.push("CHANGELOG.md: missing");
}

const tag = newestTag(root);
if (tag !== undefined && tag.replace(/^v/, "") !== version) {
  problems.push(`newest git tag is ${tag}`);
}

if (problems.length > 0) {
  console.error(`VERSION is ${version}, but:`);
  for (const problem of problems) console.error(`  ${problem}`);
  console.error(
    "Run `node scripts/stamp-version.mjs` for stamped files; fix CHANGELOG.md or tags by hand.",
  );
  process.exit(1);
}
console.log(
  `version ${version}: every stamped file, CHANGELOG.md${tag ? " and the newest tag" : ""} agree`,
);

/** The highest version tag (semantic order), or undefined when the repository has none. */
function newestTag(dir) {
  let out;
  try {
    out = execFileSync("git", ["tag", "--list", "--sort=-v:refname"], {
      cwd: dir,
      encoding: "utf8",
    });
  } catch {
    return undefined;
  }
  return out
    .split("\n")
    .find((t) => /^v?\d+\.\d+\.\d+/.test(t.trim()))
    ?.trim();
}
