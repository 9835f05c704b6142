#!/usr/bin/env node
// Stamps the root VERSION into every file that carries the release version: package manifests
// (and their @atrium/* dependency pins), the lockfile's workspace entries, the OpenAPI documents'
// info.version, the binaries' version constants, the Python and Go SDKs' versions, and the
// container image's label and the tag Compose and Kubernetes run. `--check`
// lists disagreements instead (used by scripts/check-version.mjs). The TypeScript SDK's User-Agent
// reads its package.json, so it follows along.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const repoRoot = fileURLToPath(new URL("..", import.meta.url));

export function readRootVersion(root = repoRoot) {
  const version = readFileSync(join(root, "VERSION"), "utf8").trim();
  if (!/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(version)) {
    throw new Error(`VERSION must be a semantic version, got "${version}"`);
  }
  return version;
}

const isAtrium = (name) => name.startsWith("@atrium/");
const dependencyFields = [
  "dependencies",
  "devDependencies",
  "peerDependencies",
  "optionalDependencies",
];

/** Every version-bearing spot in a package manifest, as [label, get, set]. */
function manifestSpots(json) {
  const spots = [["version", () => json.version, (v) => (json.version = v)]];
  for (const field of dependencyFields) {
    for (const name of Object.keys(json[field] ?? {}).filter(isAtrium)) {
      spots.push([`${field}.${name}`, () => json[field][name], (v) => (json[field][name] = v)]);
    }
  }
  return spots;
}

function lockSpots(json) {
  const spots = [["version", () => json.version, (v) => (json.version = v)]];
  for (const [key, entry] of Object.entries(json.packages ?? {})) {
    // Workspaces only: `packages/<name>`, not a dependency npm nested under one
    // (`packages/gateway/node_modules/glob` has its own version).
    if (key !== "" && !/^packages\/[^/]+$/.test(key)) continue;
    for (const [label, get, set] of manifestSpots(entry))
      spots.push([`packages["${key}"].${label}`, get, set]);
  }
  return spots;
}

function openApiSpots(json) {
  return [["info.version", () => json.info?.version, (v) => (json.info.version = v)]];
}

function jsonTarget(file, spotsOf) {
  return {
    file,
    stamp(version) {
      const json = JSON.parse(readFileSync(file, "utf8"));
      for (const [, , set] of spotsOf(json)) set(version);
      writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
    },
    mismatches(version) {
      const json = JSON.parse(readFileSync(file, "utf8"));
      return spotsOf(json)
        .filter(([, get]) => get() !== version)
        .map(([label, get]) => `${label} is ${JSON.stringify(get())}`);
    },
  };
}

const versionConstant = /export const VERSION = "([^"]*)";/;

const quoted = (match, version) => match.replace(/"[^"]*"/, `"${version}"`);

/**
 * A text file whose version is the first group of `pattern` (which must match the whole spot);
 * `render` puts a version into the matched text (by default, into its quoted string).
 */
function patternTarget(file, pattern, label, render = quoted) {
  return {
    file,
    stamp(version) {
      const text = readFileSync(file, "utf8");
      writeFileSync(
        file,
        text.replace(pattern, (match) => render(match, version)),
      );
    },
    mismatches(version) {
      const found = pattern.exec(readFileSync(file, "utf8"))?.[1];
      return found === version ? [] : [`${label} is ${JSON.stringify(found)}`];
    },
  };
}

/** The SDKs in other languages carry the version in their own idiom. */
const sdkVersionSpots = [
  ["sdks/python/pyproject.toml", /^version = "([^"]*)"$/m, "version"],
  ["sdks/python/src/atrium/_version.py", /^__version__ = "([^"]*)"$/m, "__version__"],
  ["sdks/go/version.go", /^const Version = "([^"]*)"$/m, "Version"],
];

/** The image's OCI label, and the image tags the Compose file and the Kubernetes base run. */
const imageVersionSpots = [
  ["Dockerfile", /^LABEL org\.opencontainers\.image\.version="([^"]*)"$/m, "image label", quoted],
  [
    "deploy/compose/docker-compose.yml",
    /^ {2}image: atrium:(\S+)$/m,
    "image tag",
    (match, version) => match.replace(/:[^:]*$/, `:${version}`),
  ],
  [
    "deploy/kubernetes/base/kustomization.yaml",
    /^ {4}newTag: "([^"]*)"$/m,
    "images newTag",
    quoted,
  ],
];

const list = (dir) => (existsSync(dir) ? readdirSync(dir).sort() : []);

/** The stamped files that exist in this checkout. */
export function versionTargets(root = repoRoot) {
  const targets = [jsonTarget(join(root, "package.json"), manifestSpots)];
  if (existsSync(join(root, "package-lock.json"))) {
    targets.push(jsonTarget(join(root, "package-lock.json"), lockSpots));
  }
  for (const pkg of list(join(root, "packages"))) {
    const manifest = join(root, "packages", pkg, "package.json");
    if (existsSync(manifest)) targets.push(jsonTarget(manifest, manifestSpots));
    const constant = join(root, "packages", pkg, "src", "version.ts");
    if (existsSync(constant) && versionConstant.test(readFileSync(constant, "utf8"))) {
      targets.push(patternTarget(constant, versionConstant, "VERSION"));
    }
  }
  for (const doc of list(join(root, "openapi")).filter((f) => f.endsWith(".json"))) {
    targets.push(jsonTarget(join(root, "openapi", doc), openApiSpots));
  }
  for (const [file, pattern, label] of sdkVersionSpots) {
    if (existsSync(join(root, file))) targets.push(patternTarget(join(root, file), pattern, label));
  }
  for (const [file, pattern, label, render] of imageVersionSpots) {
    if (existsSync(join(root, file))) {
      targets.push(patternTarget(join(root, file), pattern, label, render));
    }
  }
  return targets;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const version = readRootVersion();
  for (const target of versionTargets()) {
    if (target.mismatches(version).length === 0) continue;
    target.stamp(version);
    console.log(`stamped ${relative(repoRoot, target.file)} with ${version}`);
  }
}
