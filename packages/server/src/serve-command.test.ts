import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { serviceNamed } from "./launch.js";

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));
const main = fileURLToPath(new URL("main.ts", import.meta.url));

function atrium(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ["--conditions=atrium-source", "--import", "tsx", main, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** The REST address of the line `atrium serve` prints for `name`, once it is up. */
function restUrlOf(child: ChildProcess, name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = "";
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      output += chunk;
      const url = new RegExp(`^  ${name} +REST (http://\\S+)$`, "m").exec(output)?.[1];
      if (url) resolve(url);
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code} before serving`)));
  });
}

test("serve names: chat, and agent as chat's former name; nothing else", () => {
  assert.equal(serviceNamed("chat"), "chat");
  assert.equal(serviceNamed("agent"), "chat");
  assert.equal(serviceNamed("memory"), "memory");
  assert.equal(serviceNamed("constructor"), undefined);
  assert.equal(serviceNamed("agents"), undefined);
  assert.equal(serviceNamed(undefined), undefined);
});

for (const spelling of ["chat", "agent"]) {
  test(`atrium serve ${spelling} runs the chat host`, async (t) => {
    const traces = await mkdtemp(join(tmpdir(), "atrium-serve-"));
    t.after(() => rm(traces, { recursive: true, force: true }));
    const child = atrium(["serve", spelling], {
      AGENT_HOST: "127.0.0.1",
      AGENT_PORT: "0",
      TRACES_DIR: traces,
      LOG_LEVEL: "warn",
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    t.after(async () => {
      child.kill("SIGTERM");
      await exited;
    });
    const url = await restUrlOf(child, "chat");
    const health = await fetch(`${url}/health`);
    assert.equal(health.status, 200);
    // The chat router under /api/v1 is what makes this host the chat host.
    const workflows = await fetch(`${url}/api/v1/chat/workflows`);
    assert.equal(workflows.status, 200);
    assert.ok(Array.isArray(((await workflows.json()) as { workflows: unknown }).workflows));
  });
}

test("atrium serve with an unknown service names the services in its usage", async () => {
  const child = atrium(["serve", "agents"], {});
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr += chunk;
  });
  const code = await new Promise((resolve) => child.once("exit", resolve));
  assert.equal(code, 2);
  assert.match(stderr, /atrium serve <service> +run one service \(memory, broker, gateway, chat;/);
});
