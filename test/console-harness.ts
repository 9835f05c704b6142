import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { findChromium } from "@atrium/chat";
import { realServersRequired } from "@atrium/kit/testing";
import { type Browser, chromium } from "playwright-core";
import { atriumStartEnv } from "./atrium-start-env.js";

// The console as an operator sees it: Debian's Chromium against a real `atrium start` (after
// `make build`, which bundles the console). Screenshots land in test/artifacts/ (gitignored).
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
export const artifacts = join(repoRoot, "test", "artifacts", "console");

/** `atrium start` on spare ports, in its own process group so the whole stack can be killed. */
export async function startAtrium(dataDir: string, env: Record<string, string> = {}) {
  const { ports, env: startEnv } = await atriumStartEnv(dataDir);
  const child = spawn("npx", ["--no-install", "atrium", "start"], {
    cwd: repoRoot,
    env: { ...process.env, ...startEnv, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "inherit"],
    detached: true,
  });
  let output = "";
  child.stdout.setEncoding("utf8");
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: string) => {
      output += chunk;
      if (output.includes("  stop ")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`atrium start exited ${code}:\n${output}`)));
  });
  // The gateway requires its inbound key: the operator's, or the development key in dev.env.
  const devEnv = await readFile(join(dataDir, "dev.env"), "utf8");
  const operatorKey =
    env.GATEWAY_API_KEYS ?? /^GATEWAY_API_KEYS=(.+)$/m.exec(devEnv)?.[1]?.split(",")[0];
  return {
    operatorKey: operatorKey ?? "",
    gateway: `http://127.0.0.1:${ports.gwRest}`,
    broker: `http://127.0.0.1:${ports.brokerRest}`,
    memory: `http://127.0.0.1:${ports.memRest}`,
    agent: `http://127.0.0.1:${ports.agent}`,
    stop() {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // the group has already exited
      }
    },
  };
}

/**
 * Debian's Chromium, headless, closed after the test; undefined when the test was skipped (no
 * Chromium on a developer machine; under CI=true that is a failure, as with the browser tool).
 */
export async function launchChromium(t: TestContext): Promise<Browser | undefined> {
  const executablePath = findChromium(process.env.CHROMIUM_PATH);
  if (!executablePath) {
    if (realServersRequired)
      assert.fail("no system Chromium (set CHROMIUM_PATH); CI=true requires it");
    t.skip("no system Chromium (set CHROMIUM_PATH)");
    return undefined;
  }
  await mkdir(artifacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  t.after(() => browser.close());
  return browser;
}
