// Docker for the container suites: finds a daemon, a BuildKit-capable client and Compose, makes
// the local base images (deploy/base-image.sh) and builds the Atrium image once per run. Without
// a daemon the suites skip with the reason; under CI=true they fail with it.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { realServersRequired } from "@atrium/kit/testing";

export const repoRoot = fileURLToPath(new URL("..", import.meta.url));
export const version = readFileSync(new URL("../VERSION", import.meta.url), "utf8").trim();
export const image = `atrium:${version}`;

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number; cwd?: string } = {},
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd ?? repoRoot,
        env: { ...process.env, ...options.env },
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr: stderr || (error?.message ?? "") });
      },
    );
  });
}

export async function runOk(command: string, args: string[], options?: Parameters<typeof run>[2]) {
  const result = await run(command, args, options);
  assert.equal(
    result.code,
    0,
    `${command} ${args.join(" ")} failed (${result.code}):\n${result.stderr.slice(-4000)}`,
  );
  return result.stdout;
}

export interface Docker {
  /** A client whose `build` speaks BuildKit (build secrets). */
  builder: string;
  /** Compose: `docker compose` (v2) or `docker-compose` (1.29+). */
  compose: string[];
}

let found: Promise<Docker | string> | undefined;

async function findDocker(): Promise<Docker | string> {
  const info = await run("docker", ["info", "--format", "{{.ServerVersion}}"], {
    timeoutMs: 20_000,
  });
  if (info.code !== 0)
    return `no Docker daemon (docker info: ${info.stderr.trim().split("\n")[0]})`;
  let builder: string | undefined;
  for (const candidate of [process.env.DOCKER, "docker", "/usr/bin/docker"]) {
    if (!candidate) continue;
    const help = await run(candidate, ["build", "--help"], { env: { DOCKER_BUILDKIT: "1" } });
    if (help.code === 0 && help.stdout.includes("--secret")) {
      builder = candidate;
      break;
    }
  }
  if (!builder)
    return "no Docker client that builds with BuildKit (install buildx, or Debian's docker.io)";
  // Compose v2 (the plugin) where installed; else v1.29, which is what Debian's docker-compose
  // package is (bookworm has no plugin). The suites use only what both take alike: -p, -f and
  // --env-file before the command, `ps -a -q` (v2's `ps` leaves stopped containers out).
  if ((await run("docker", ["compose", "version"])).code === 0) {
    return { builder, compose: ["docker", "compose"] };
  }
  if ((await run("docker-compose", ["version"])).code === 0)
    return { builder, compose: ["docker-compose"] };
  return "no Docker Compose (the compose plugin or docker-compose)";
}

/** The Docker tools, or undefined when the test was skipped. */
export async function needsDocker(t: TestContext): Promise<Docker | undefined> {
  found ??= findDocker();
  const docker = await found;
  if (typeof docker !== "string") return docker;
  if (realServersRequired) assert.fail(`${docker}; CI=true requires it`);
  t.skip(docker);
  return undefined;
}

let built: Promise<void> | undefined;

/** The base images, then the image from this checkout (cached layers make a rebuild quick). */
export function buildImage(docker: Docker): Promise<void> {
  built ??= (async () => {
    await runOk("bash", ["deploy/base-image.sh"], { timeoutMs: 15 * 60_000 });
    const ca = "/etc/ssl/certs/ca-certificates.crt";
    await runOk(
      docker.builder,
      [
        "build",
        "--network",
        "host",
        ...(existsSync(ca) ? ["--secret", `id=ca,src=${ca}`] : []),
        "-t",
        image,
        ".",
      ],
      { env: { DOCKER_BUILDKIT: "1" }, timeoutMs: 30 * 60_000 },
    );
  })();
  return built;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function waitHealthy(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (error) {
      last = String(error);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  assert.fail(`${url} not healthy within ${timeoutMs} ms (${last})`);
}

export async function json(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  assert.ok(res.ok, `${res.url}: HTTP ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Reads an SSE stream until a step_complete event, returning the events' types. */
export async function streamUntilComplete(url: string, apiKey: string): Promise<string[]> {
  const res = await fetch(url, {
    headers: { "x-api-key": apiKey },
    signal: AbortSignal.timeout(60_000),
  });
  assert.equal(res.status, 200);
  const types: string[] = [];
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const data = buffer
        .slice(0, end)
        .split("\n")
        .find((line) => line.startsWith("data: "));
      buffer = buffer.slice(end + 2);
      if (data) {
        const type = (JSON.parse(data.slice(6)) as { type: string }).type;
        types.push(type);
        if (type === "step_complete") return types;
      }
      end = buffer.indexOf("\n\n");
    }
  }
  return types;
}
