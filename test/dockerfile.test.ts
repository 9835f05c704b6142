// The Dockerfile installs from the workspaces' manifests before it copies the sources (so that a
// source change does not redo the install): a package added without its manifest in that list
// would be missing from the image's node_modules.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

const root = new URL("../", import.meta.url);

test("the Dockerfile copies every workspace's manifest before the install", () => {
  const dockerfile = readFileSync(new URL("Dockerfile", root), "utf8");
  const install = dockerfile.indexOf("npm ci");
  const packages = readdirSync(new URL("packages/", root)).filter((name) =>
    existsSync(new URL(`packages/${name}/package.json`, root)),
  );
  assert.ok(packages.length > 0);
  for (const name of packages) {
    const copy = dockerfile.indexOf(`COPY packages/${name}/package.json packages/${name}/\n`);
    assert.ok(
      copy >= 0 && copy < install,
      `packages/${name}/package.json is not copied before npm ci`,
    );
  }
});
