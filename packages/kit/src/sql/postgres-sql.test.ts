import assert from "node:assert/strict";
import { createServer, connect as netConnect, type Server, type Socket } from "node:net";
import { after, test } from "node:test";
import { AtriumError, Code } from "../errors.js";
import { postgresUrl } from "../testing/servers.js";
import { createPostgresSql } from "./postgres-sql.js";

/**
 * A TCP relay in front of the test server that the test can cut: the client then sees its socket
 * close with no word from PostgreSQL, the failure `pg` reports with no code.
 */
async function startRelay(target: URL) {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = netConnect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => undefined);
      socket.on("close", () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as { port: number }).port);
  return {
    url: url.toString(),
    cut() {
      for (const socket of sockets) socket.destroy();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const relay = await startRelay(new URL(postgresUrl()));
after(() => relay.close());

test("a connection cut under a query is Unavailable, and the next query gets a new one", async (t) => {
  const sql = await createPostgresSql({ url: relay.url, max: 1 });
  t.after(() => sql.close());
  const sleeping = sql.query("SELECT pg_sleep(5)");
  await new Promise((resolve) => setTimeout(resolve, 200));
  relay.cut();
  await assert.rejects(sleeping, (error: unknown) => {
    assert.ok(error instanceof AtriumError, String(error));
    assert.equal(error.code, Code.Unavailable);
    assert.equal(error.metadata.get("retry-after"), "1");
    return true;
  });
  assert.deepEqual((await sql.query("SELECT 1 AS one")).rows, [{ one: 1 }]);
});

test("a connection cut inside a transaction is Unavailable", async (t) => {
  const sql = await createPostgresSql({ url: relay.url, max: 1 });
  t.after(() => sql.close());
  const work = sql.transaction(async (tx) => {
    await tx.query("SELECT 1");
    setTimeout(() => relay.cut(), 200);
    await tx.query("SELECT pg_sleep(5)");
  });
  await assert.rejects(work, (error: unknown) => {
    assert.ok(error instanceof AtriumError, String(error));
    assert.equal(error.code, Code.Unavailable);
    return true;
  });
  assert.deepEqual((await sql.query("SELECT 2 AS two")).rows, [{ two: 2 }]);
});

test("no connection made in time is Unavailable", async (t) => {
  // Accepts and never answers, as a database host that has stopped responding.
  // (Reading what arrives, so a client closing its end closes the server's too.)
  const silent = createServer((socket) => socket.resume());
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => silent.close(() => resolve())));
  const port = (silent.address() as { port: number }).port;
  const sql = await createPostgresSql({
    url: `postgres://postgres@127.0.0.1:${port}/test`,
    connectTimeoutMs: 200,
  });
  t.after(() => sql.close());
  await assert.rejects(sql.query("SELECT 1"), (error: unknown) => {
    assert.ok(error instanceof AtriumError, String(error));
    assert.equal(error.code, Code.Unavailable);
    return true;
  });
});

test("errors of the query itself pass through, coded or not, and keep the connection", async (t) => {
  const sql = await createPostgresSql({ url: relay.url, max: 1 });
  t.after(() => sql.close());
  const [backend] = (await sql.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows;
  await assert.rejects(sql.query("SELEC 1"), (error: unknown) => {
    assert.ok(!(error instanceof AtriumError), String(error));
    assert.equal((error as { code?: string }).code, "42601");
    return true;
  });
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  // pg fails to serialize the parameter before sending anything: no code, and no connection lost.
  await assert.rejects(sql.query("SELECT $1::jsonb", [circular]), (error: unknown) => {
    assert.ok(!(error instanceof AtriumError), String(error));
    return true;
  });
  const [again] = (await sql.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows;
  assert.equal(again?.pid, backend?.pid);
});
