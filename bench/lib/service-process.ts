import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createTestPostgres, redisUrl } from "@atrium/kit/testing";

export interface MemoryProcessUrls {
  rest: string;
  grpc: string;
  /** A no-op Fastify route in the same process: the HTTP floor of the machine. */
  noop: string;
  /** A no-op gRPC method on Connect's Node handler alone, in the same process. */
  noopGrpc: string;
}

/**
 * Starts bench/memory/serve.ts in a child process and resolves with its URLs, so the load
 * generator does not share the service's event loop (nor its background work: chain checks,
 * heat). The service runs from the packages' compiled `dist` (as `make start` runs it; `make
 * bench` builds first), not from the sources through tsx, whose transform adds work to every
 * function it defines.
 */
export function startMemoryProcess(env: Record<string, string>, nodeArgs: string[] = []) {
  return startServiceProcess<MemoryProcessUrls>(
    new URL("../memory/serve.ts", import.meta.url),
    env,
    nodeArgs,
  );
}

/**
 * Starts bench/lib/serve-broker.ts in a child process and resolves with its URLs, so neither the
 * broker's CPU lands in a bench's own figures nor the bench's work in the broker's latency.
 */
export function startBrokerProcess(env: Record<string, string>) {
  return startServiceProcess<{ rest: string; grpc?: string }>(
    new URL("./serve-broker.ts", import.meta.url),
    env,
  );
}

/**
 * The memory service as deployed for the benches: its own process, a fresh PostgreSQL database,
 * Redis, a scratch data directory, no background promoter; `stop` removes all of it.
 */
export async function startMemoryOnPostgres(
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
) {
  const pg = await createTestPostgres({ max: 4 });
  const dataDir = mkdtempSync(join(tmpdir(), "memory-bench-"));
  const server = await startMemoryProcess(
    {
      MEMORY_HOST: "127.0.0.1",
      MEMORY_REST_PORT: "0",
      MEMORY_GRPC_PORT: "0",
      ATRIUM_DATA_DIR: dataDir,
      DATABASE_URL: pg.url,
      REDIS_URL: redisUrl(),
      MEMORY_PROMOTER_INTERVAL: "0s",
      ...env,
    },
    nodeArgs,
  );
  return {
    ...server,
    /** The service's database, for waiting on its background work. */
    sql: pg.sql,
    async stop() {
      await server.stop();
      await pg.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs a bench `serve-*.ts` script in its own process; it prints its URLs as one JSON line.
 * `nodeArgs` go before the script (Node refuses `--cpu-prof` in NODE_OPTIONS).
 */
export async function startServiceProcess<Urls>(
  script: URL,
  env: Record<string, string>,
  nodeArgs: string[] = [],
) {
  const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", fileURLToPath(script)], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = (await once(
    createInterface({ input: child.stdout as NodeJS.ReadableStream }),
    "line",
  )) as [string];
  const urls = JSON.parse(line) as Urls;
  return {
    urls,
    pid: child.pid as number,
    async stop() {
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}
