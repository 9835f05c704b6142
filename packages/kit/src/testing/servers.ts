import { connect } from "node:net";
import type { TestContext } from "node:test";

export type RealServer = "postgres" | "redis";

/** In CI a missing real server is a failure, never a skip. */
export const realServersRequired = process.env.CI === "true";

export function postgresUrl(): string {
  return process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
}

/**
 * The test Redis, or one of its numbered databases. Services on other PostgreSQL schemas have
 * queues of their own (the prefix derives from DATABASE_URL), but they share one database's
 * load and caches: a suite whose services must check their own chains in time takes a database
 * of its own (1 read-your-writes, 2 forget, 3 chain fairness, 5 the queue prefix test).
 */
export function redisUrl(database = 0): string {
  const url = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
  return database === 0 ? url : `${url.replace(/\/\d*$/, "")}/${database}`;
}

const probes = new Map<RealServer, Promise<boolean>>();

function probe(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

export function serverAvailable(server: RealServer): Promise<boolean> {
  let p = probes.get(server);
  if (!p) {
    const url = new URL(server === "postgres" ? postgresUrl() : redisUrl());
    p = probe(url.hostname, Number(url.port || (server === "postgres" ? 5432 : 6379)));
    probes.set(server, p);
  }
  return p;
}

/**
 * Gate for a test that needs a real server: runs it when the server answers, skips it with a
 * reason on a developer machine without one, and fails it when CI=true.
 */
export async function needsServer(t: TestContext, server: RealServer): Promise<boolean> {
  if (await serverAvailable(server)) return true;
  const message = `${server} is not reachable (${server === "postgres" ? postgresUrl() : redisUrl()})`;
  if (realServersRequired) throw new Error(`${message}; CI=true requires it`);
  t.skip(message);
  return false;
}
