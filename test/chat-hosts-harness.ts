// Agent (chat) hosts for end-to-end tests: several over one PostgreSQL database and one Redis,
// each with its own traces directory as on machines of their own, in this process or as a
// process of their own that a test can kill; and the webhook the communicator sends to.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { startAgentService } from "@atrium/chat";
import { createLogger } from "@atrium/kit";
import { createTestPostgres, eventually, redisUrl } from "@atrium/kit/testing";
import { freePort } from "./gateway-tcp-proxy.js";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

export interface ChatHost {
  /** The chat API: `{rest}/api/v1`. */
  base: string;
  rest: string;
  /** The host's own traces directory. */
  dir: string;
  stop(): Promise<void>;
}

export interface ChatHostsOptions {
  /** One host per name (its logger's and directory's name). Default two, `a` and `b`. */
  names?: string[];
  /** Settings of every host beside the shared database and Redis. */
  env?: Record<string, string>;
  /** The database the hosts share; a fresh one, dropped after the test, when absent. */
  databaseUrl?: string;
}

/** The env of a host over the shared stores, listening on `port` (0: any) of loopback. */
function hostEnv(dir: string, databaseUrl: string, port: number, env: Record<string, string>) {
  return {
    AGENT_PORT: String(port),
    AGENT_HOST: "127.0.0.1",
    TRACES_DIR: dir,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl(),
    ...env,
  };
}

async function tracesDir(t: TestContext, name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `agent-${name}-`));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A test database for the hosts, dropped after the test. */
export async function sharedDatabase(t: TestContext): Promise<string> {
  const db = await createTestPostgres();
  t.after(() => db.drop());
  return db.url;
}

/** Agent hosts in this process over one database and one Redis, stopped after the test. */
export async function startChatHosts(
  t: TestContext,
  options: ChatHostsOptions = {},
): Promise<ChatHost[]> {
  const databaseUrl = options.databaseUrl ?? (await sharedDatabase(t));
  const hosts: ChatHost[] = [];
  for (const name of options.names ?? ["a", "b"]) {
    const dir = await tracesDir(t, name);
    const host = await startAgentService({
      env: hostEnv(dir, databaseUrl, 0, options.env ?? {}),
      logger: createLogger({ name: `agent-${name}`, level: "silent" }),
    });
    t.after(() => host.stop());
    hosts.push({ base: `${host.urls.rest}/api/v1`, rest: host.urls.rest, dir, stop: host.stop });
  }
  return hosts;
}

export interface ChatHostProcess extends ChatHost {
  child: ChildProcess;
}

/**
 * `atrium serve chat` from the sources as a process of its own (and its own process group, so
 * that what it started goes with it after the test), for a test that kills it with -9.
 */
export async function startChatHostProcess(
  t: TestContext,
  name: string,
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ChatHostProcess> {
  const dir = await tracesDir(t, name);
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      "--conditions=atrium-source",
      "--import",
      "tsx",
      join(repoRoot, "packages/server/src/main.ts"),
      "serve",
      "chat",
    ],
    {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, ...hostEnv(dir, databaseUrl, port, env), LOG_LEVEL: "warn" },
      stdio: ["ignore", "ignore", "inherit"],
      detached: true,
    },
  );
  const pid = child.pid as number;
  t.after(() => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone with its group.
    }
  });
  const rest = `http://127.0.0.1:${port}`;
  await eventually(
    `agent host ${name} answers`,
    async () => {
      if (child.exitCode !== null) throw new Error(`agent host ${name} exited ${child.exitCode}`);
      return (await fetch(`${rest}/health`).catch(() => undefined))?.ok === true;
    },
    60_000,
  );
  return {
    base: `${rest}/api/v1`,
    rest,
    dir,
    child,
    async stop() {
      child.kill("SIGTERM");
    },
  };
}

/** A webhook receiver standing in for the team's chat: what the communicator sends lands here. */
export async function startTeamHook(t: TestContext) {
  const posts: { text: string }[] = [];
  const server = createServer(async (req, res) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    posts.push(JSON.parse(text));
    res.writeHead(200).end("ok");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, posts };
}
