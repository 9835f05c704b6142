import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { freePort } from "../gateway-tcp-proxy.js";

/**
 * Servers the fault suite owns, on spare ports, so it can kill and stop them: the shared
 * PostgreSQL and Redis of the machine are never touched.
 */

const run = promisify(execFile);

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

export interface OwnRedis {
  url: string;
  /** SIGKILL: no goodbye to clients, as in a crash. */
  kill(): Promise<void>;
  /** A fresh server on the same port (empty: no persistence). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: "ignore" },
    );
    await until("redis-server", () => listening(port));
  };
  const kill = async () => {
    const dying = child;
    child = undefined;
    if (!dying || dying.exitCode !== null) return;
    const exited = new Promise((resolve) => dying.once("exit", resolve));
    dying.kill("SIGKILL");
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, kill, start, stop: kill };
}

export interface OwnPostgres {
  url: string;
  /** `pg_ctl stop -m immediate`: every backend dies at once, as in a crash. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster and deletes it. */
  destroy(): Promise<void>;
}

function postgresBin(name: string): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort().reverse() : [];
  for (const version of versions) {
    const path = join(root, version, "bin", name);
    if (existsSync(path)) return path;
  }
  return name;
}

/** initdb refuses to run as root; the cluster then belongs to the postgres user. */
const asOwner = (command: string, args: string[]): [string, string[]] =>
  process.getuid?.() === 0
    ? ["runuser", ["-u", "postgres", "--", command, ...args]]
    : [command, args];

async function runAsOwner(command: string, args: string[]): Promise<void> {
  const [file, argv] = asOwner(command, args);
  await run(file, argv);
}

/** A throw-away cluster (initdb + pg_ctl) on a spare port, trust auth, no fsync. */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = mkdtempSync(join(tmpdir(), "atrium-faults-pg-"));
  if (process.getuid?.() === 0) chownSync(dir, ...(await postgresIds()));
  const data = join(dir, "data");
  const port = await freePort();
  await runAsOwner(postgresBin("initdb"), [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=trust",
    "-E",
    "UTF8",
    "--no-sync",
    "--no-instructions",
  ]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const start = () =>
    runAsOwner(postgresBin("pg_ctl"), [
      "-D",
      data,
      "-o",
      options,
      "-l",
      join(dir, "log"),
      "-w",
      "start",
    ]);
  const stop = () =>
    runAsOwner(postgresBin("pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]).catch(
      () => undefined,
    );
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresIds(): Promise<[number, number]> {
  const [uid, gid] = await Promise.all([
    run("id", ["-u", "postgres"]),
    run("id", ["-g", "postgres"]),
  ]);
  return [Number(uid.stdout.trim()), Number(gid.stdout.trim())];
}

/** The `p`th percentile of latencies, nearest-rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
