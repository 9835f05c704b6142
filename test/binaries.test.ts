import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { atriumStartEnv } from "./atrium-start-env.js";

// The binaries as users run them from the repository root after `make build`: through npx and
// the links npm makes in node_modules/.bin, never through a path into dist/.
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const run = promisify(execFile);
const version = async () => (await readFile(join(repoRoot, "VERSION"), "utf8")).trim();

test("npx atriumctl and npx atrium run from the repository root", async () => {
  const ctl = await run("npx", ["--no-install", "atriumctl", "version"], { cwd: repoRoot });
  assert.equal(ctl.stdout.trim(), `atriumctl ${await version()}`);
  const server = await run("npx", ["--no-install", "atrium", "version"], { cwd: repoRoot });
  assert.equal(server.stdout.trim(), await version());
});

test("a binary that was not built yet says to run make build", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "atrium-bin-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, "bin"));
  await copyFile(join(repoRoot, "packages/manifest/bin/atriumctl.js"), join(dir, "bin/x.js"));
  const result = await run(process.execPath, [join(dir, "bin/x.js"), "version"]).then(
    () => assert.fail("an unbuilt binary must fail"),
    (error: { code: number; stderr: string }) => error,
  );
  assert.equal(result.code, 1);
  assert.match(result.stderr, /atriumctl is not built yet: run `make build`/);
});

test("npx atrium start ends its output with the newcomer's next steps", async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), "atrium-start-"));
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  const { ports, env: startEnv } = await atriumStartEnv(dataDir);
  const child = spawn("npx", ["--no-install", "atrium", "start"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      ...startEnv,
    },
    stdio: ["ignore", "pipe", "inherit"],
    detached: true,
  });
  t.after(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // the group has already exited
    }
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
  // Give late log lines a moment to land, so a banner that is not last would show.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const lines = output.trimEnd().split("\n");
  const banner = lines.slice(lines.indexOf("Atrium is running:"));
  assert.ok(banner.length > 1, output);
  assert.ok(
    !banner.some((line) => line.startsWith("{")),
    `a log line came after the banner:\n${output}`,
  );
  assert.ok(
    banner.includes(
      `  memory   REST http://127.0.0.1:${ports.memRest}  gRPC http://127.0.0.1:${ports.memGrpc}`,
    ),
  );
  assert.ok(banner.some((line) => line.includes(join(dataDir, "dev.env"))));
  assert.ok(banner.some((line) => line.startsWith("  walkthrough ")));
  assert.match(banner.at(-1)!, /^ {2}stop {10}Ctrl-C/);
  // Ctrl-C reaches the whole process group, as in a terminal.
  process.kill(-child.pid!, "SIGINT");
  await new Promise((resolve) => child.stdout.once("close", resolve));
  for (const service of ["chat", "gateway", "broker", "memory"]) {
    assert.match(output, new RegExp(`"name":"${service}".*"msg":"service stopped"`));
  }
});
