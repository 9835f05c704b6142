import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { repoRoot } from "./testing/paths.js";

const run = promisify(execFile);

async function miniRepo(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "atrium-version-"));
  for (const script of ["stamp-version.mjs", "check-version.mjs"]) {
    await mkdir(join(root, "scripts"), { recursive: true });
    await copyFile(join(repoRoot, "scripts", script), join(root, "scripts", script));
  }
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, name)), { recursive: true });
    await writeFile(join(root, name), text);
  }
  return root;
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

async function check(root: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run(process.execPath, [join(root, "scripts", "check-version.mjs")], {
      cwd: root,
    });
    return { code: 0, output: stdout };
  } catch (error) {
    const e = error as { code: number; stderr: string };
    return { code: e.code, output: e.stderr };
  }
}

describe("VERSION stamping", () => {
  it("finds every disagreement, stamps them away, and checks CHANGELOG.md and the newest tag", async () => {
    const root = await miniRepo({
      VERSION: "0.2.0\n",
      "package.json": json({ name: "atrium", version: "0.1.0" }),
      "packages/a/package.json": json({
        name: "@atrium/a",
        version: "0.1.0",
        dependencies: { "@atrium/b": "0.1.0", yaml: "^2.0.0" },
      }),
      "packages/a/src/version.ts": 'export const VERSION = "0.1.0";\n',
      "openapi/a.v1.openapi.json": json({
        openapi: "3.0.3",
        info: { title: "a", version: "0.1.0" },
      }),
      "sdks/python/pyproject.toml": '[project]\nname = "atrium-sdk"\nversion = "0.1.0"\n',
      "sdks/python/src/atrium/_version.py": '__version__ = "0.1.0"\n',
      "sdks/go/version.go": 'package atrium\n\nconst Version = "0.1.0"\n',
      Dockerfile: 'FROM node\nLABEL org.opencontainers.image.version="0.1.0"\n',
      "deploy/compose/docker-compose.yml": "x-atrium: &atrium\n  image: atrium:0.1.0\n",
      "deploy/kubernetes/base/kustomization.yaml":
        'images:\n  - name: atrium\n    newTag: "0.1.0"\n',
      "CHANGELOG.md": "# Changelog\n\n## 0.1.0 - 2026-11-01\n",
    });
    const before = await check(root);
    assert.equal(before.code, 1);
    for (const expected of [
      'package.json: version is "0.1.0"',
      'packages/a/package.json: version is "0.1.0"',
      'packages/a/package.json: dependencies.@atrium/b is "0.1.0"',
      'packages/a/src/version.ts: VERSION is "0.1.0"',
      'openapi/a.v1.openapi.json: info.version is "0.1.0"',
      'sdks/python/pyproject.toml: version is "0.1.0"',
      'sdks/python/src/atrium/_version.py: __version__ is "0.1.0"',
      'sdks/go/version.go: Version is "0.1.0"',
      'Dockerfile: image label is "0.1.0"',
      'deploy/compose/docker-compose.yml: image tag is "0.1.0"',
      'deploy/kubernetes/base/kustomization.yaml: images newTag is "0.1.0"',
      "CHANGELOG.md: top heading is 0.1.0",
    ]) {
      assert.ok(before.output.includes(expected), `missing "${expected}" in:\n${before.output}`);
    }

    await run(process.execPath, [join(root, "scripts", "stamp-version.mjs")], { cwd: root });
    const pkg = JSON.parse(await readFile(join(root, "packages/a/package.json"), "utf8"));
    assert.deepEqual(pkg.dependencies, { "@atrium/b": "0.2.0", yaml: "^2.0.0" });
    assert.equal(
      await readFile(join(root, "packages/a/src/version.ts"), "utf8"),
      'export const VERSION = "0.2.0";\n',
    );
    assert.equal(
      await readFile(join(root, "sdks/go/version.go"), "utf8"),
      'package atrium\n\nconst Version = "0.2.0"\n',
    );
    assert.equal(
      await readFile(join(root, "deploy/compose/docker-compose.yml"), "utf8"),
      "x-atrium: &atrium\n  image: atrium:0.2.0\n",
    );
    assert.match(
      await readFile(join(root, "Dockerfile"), "utf8"),
      /^LABEL org\.opencontainers\.image\.version="0\.2\.0"$/m,
    );
    assert.match(
      await readFile(join(root, "sdks/python/pyproject.toml"), "utf8"),
      /^name = "atrium-sdk"\nversion = "0\.2\.0"$/m,
    );
    const stamped = await check(root);
    assert.deepEqual(
      stamped.output.split("\n").filter((line) => line.startsWith("  ")),
      ["  CHANGELOG.md: top heading is 0.1.0"],
    );

    await writeFile(
      join(root, "CHANGELOG.md"),
      "# Changelog\n\n## 0.2.0 - 2026-11-22\n\n## 0.1.0 - 2026-11-01\n",
    );
    assert.equal((await check(root)).code, 0);

    const git = (...args: string[]) =>
      run("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: root });
    await git("init", "-q");
    await git("commit", "-q", "--allow-empty", "-m", "x");
    await git("tag", "v0.1.0");
    await git("tag", "v0.10.0");
    const tagged = await check(root);
    assert.equal(tagged.code, 1);
    assert.match(tagged.output, /newest git tag is v0\.10\.0/);
    await git("tag", "-d", "v0.10.0");
    await git("tag", "v0.2.0");
    assert.equal((await check(root)).code, 0);
  });
});
