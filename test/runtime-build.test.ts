// The runtime build (`tsc -b` into packages/*/dist, what the image ships after pruning dev
// dependencies) holds no test code. Contract suites, fixtures and test servers live under each
// package's src/testing, which its tsconfig leaves out of the build, and the `./testing` exports
// resolve only to sources, under the atrium-source condition the tests and benchmarks run with.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import ts from "typescript";

const root = new URL("..", import.meta.url).pathname;

/** The workspaces `tsc -b` builds: those with a tsconfig.json emitting into dist. */
const built = readdirSync(join(root, "packages")).filter((name) =>
  existsSync(join(root, "packages", name, "tsconfig.json")),
);

/** The modules and declarations under dir (a declaration keeps type-only imports). */
function emittedFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) emittedFiles(path, out);
    else if (name.endsWith(".js") || name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

test("no file of the runtime build imports node:test, and src/testing is not built", () => {
  const offenders: string[] = [];
  for (const name of built) {
    const dist = join(root, "packages", name, "dist");
    assert.ok(existsSync(dist), `packages/${name}/dist is missing: run make build`);
    if (existsSync(join(dist, "testing"))) offenders.push(`packages/${name}/dist/testing`);
    for (const file of emittedFiles(dist)) {
      const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
      if (importedFiles.some((imported) => imported.fileName === "node:test")) {
        offenders.push(relative(root, file));
      }
    }
  }
  assert.deepEqual(
    offenders,
    [],
    "test code in dist (left from an older build? rm -rf packages/*/dist && make build)",
  );
});

test("the ./testing exports resolve to sources only, never into dist", () => {
  let testingExports = 0;
  for (const name of built) {
    const manifest = JSON.parse(
      readFileSync(join(root, "packages", name, "package.json"), "utf8"),
    ) as { exports?: Record<string, Record<string, string>> };
    const testing = manifest.exports?.["./testing"];
    if (testing === undefined) continue;
    testingExports += 1;
    assert.deepEqual(Object.keys(testing), ["atrium-source"], `packages/${name} ./testing`);
    assert.ok(existsSync(join(root, "packages", name, testing["atrium-source"])));
  }
  assert.ok(testingExports > 0, "no package declares a ./testing export");
});
