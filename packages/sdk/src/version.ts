import { readFileSync } from "node:fs";

/**
 * Read from the package's own package.json (next to `src/` and `dist/` alike), which the stamping
 * script keeps equal to the root VERSION file, so the User-Agent never drifts from the release.
 */
function readVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  if (typeof manifest.version !== "string")
    throw new Error("@atrium/sdk: package.json has no version");
  return manifest.version;
}

export const sdkVersion = readVersion();

export const userAgent = `atrium-sdk/${sdkVersion}`;
