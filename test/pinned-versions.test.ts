// Kit implements parts of Connect's gRPC server and client on Connect's internal `protocol*`
// modules, and the MCP transport imports @modelcontextprotocol/sdk modules the SDK does not
// document. Neither is covered by semver: every workspace pins the one version that use was
// tested against, and an install that resolved another one fails here rather than in production.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

const root = new URL("..", import.meta.url).pathname;

/** The packages whose private or undocumented modules Atrium imports. */
const pinnedPackages = [
  "@connectrpc/connect",
  "@connectrpc/connect-node",
  "@modelcontextprotocol/sdk",
];

interface Manifest {
  version?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const readManifest = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Manifest;

const workspaces = readdirSync(join(root, "packages")).filter((name) =>
  existsSync(join(root, "packages", name, "package.json")),
);

/** Each workspace's declared version of `name` in dependencies or devDependencies. */
function declarations(name: string): { workspace: string; range: string }[] {
  const found: { workspace: string; range: string }[] = [];
  for (const workspace of workspaces) {
    const manifest = readManifest(join(root, "packages", workspace, "package.json"));
    for (const range of [manifest.dependencies?.[name], manifest.devDependencies?.[name]]) {
      if (range !== undefined) found.push({ workspace, range });
    }
  }
  return found;
}

/** The version Node loads for `name` from the workspace: its own node_modules, else the root's. */
function installedVersion(workspace: string, name: string): string | undefined {
  for (const dir of [join(root, "packages", workspace), root]) {
    const path = join(dir, "node_modules", name, "package.json");
    if (existsSync(path)) return readManifest(path).version;
  }
  return undefined;
}

for (const name of pinnedPackages) {
  test(`${name}: every workspace pins one exact version and that version is installed`, () => {
    const declared = declarations(name);
    assert.ok(declared.length > 0, `no workspace depends on ${name}`);
    for (const { workspace, range } of declared) {
      assert.match(range, /^\d+\.\d+\.\d+$/, `packages/${workspace} declares ${name}@${range}`);
    }
    const versions = new Set(declared.map((d) => d.range));
    assert.equal(
      versions.size,
      1,
      `${name} is pinned at different versions: ${declared.map((d) => `${d.workspace} ${d.range}`).join(", ")}`,
    );
    const [pinned] = versions;
    for (const { workspace } of declared) {
      assert.equal(
        installedVersion(workspace, name),
        pinned,
        `packages/${workspace} loads ${name} at another version than the pinned ${pinned}: run npm ci`,
      );
    }
  });
}
