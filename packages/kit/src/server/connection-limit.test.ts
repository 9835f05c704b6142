import assert from "node:assert/strict";
import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { mock, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { eventually } from "../testing/eventually.js";
import {
  connectionsPerClient,
  createRefusalLog,
  exemptLoopback,
  limitConnectionsPerClient,
} from "./connection-limit.js";
import { capturedLogger } from "./service-host.fixtures.js";

/** A client socket, and whether the server has closed it on us. */
async function dial(port: number) {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  await once(socket, "connect");
  const state = { socket, closed: false };
  socket.on("close", () => {
    state.closed = true;
  });
  return state;
}

const connections = (server: ReturnType<typeof createServer>) =>
  new Promise<number>((resolve, reject) =>
    server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );

test("a client's connections over the limit are closed; one freed makes room again", async (t) => {
  const refused: string[] = [];
  const server = createServer((socket: Socket) => socket.on("error", () => {}));
  limitConnectionsPerClient(server, { perClient: 2, onRefused: (a) => refused.push(a) });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const first = await dial(port);
  const second = await dial(port);
  const third = await dial(port);
  await eventually("the third connection is closed", () => third.closed);
  assert.deepEqual(
    [first.closed, second.closed, third.closed],
    [false, false, true],
    "the third connection is closed",
  );
  assert.deepEqual(refused, ["127.0.0.1"]);
  first.socket.destroy();
  await eventually("the server saw the first connection close", async () => {
    return (await connections(server)) === 1;
  });
  const fourth = await dial(port);
  await sleep(100);
  assert.equal(fourth.closed, false, "a freed connection makes room");
  for (const c of [second, fourth]) c.socket.destroy();
});

test("exempt addresses and a limit of 0 are not limited", async (t) => {
  for (const options of [{ perClient: 1, exempt: exemptLoopback }, { perClient: 0 }]) {
    const server = createServer((socket: Socket) => socket.on("error", () => {}));
    limitConnectionsPerClient(server, options);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    t.after(() => server.close());
    const { port } = server.address() as AddressInfo;
    const clients = [await dial(port), await dial(port), await dial(port)];
    await sleep(100);
    assert.deepEqual(
      clients.map((c) => c.closed),
      [false, false, false],
    );
    for (const c of clients) c.socket.destroy();
  }
  assert.equal(exemptLoopback("::ffff:127.0.0.1"), true);
  assert.equal(exemptLoopback("203.0.113.9"), false);
});

test("MAX_CONNECTIONS_PER_CLIENT sets the limit: 256 by default, 0 turns it off", () => {
  assert.equal(connectionsPerClient({}), 256);
  assert.equal(connectionsPerClient({ MAX_CONNECTIONS_PER_CLIENT: "0" }), 0);
  assert.equal(connectionsPerClient({ MAX_CONNECTIONS_PER_CLIENT: "32" }), 32);
  assert.throws(
    () => connectionsPerClient({ MAX_CONNECTIONS_PER_CLIENT: "-1" }),
    /MAX_CONNECTIONS_PER_CLIENT/,
  );
});

test("refusals are logged at warn, one line per client per interval with the count", (t) => {
  mock.timers.enable({ apis: ["setTimeout"] });
  t.after(() => mock.timers.reset());
  const log = capturedLogger();
  const refused = createRefusalLog({ logger: log.logger, perClient: 2, intervalMs: 1000 });
  const logged = () =>
    log.entries().map((line) => [line.callerAddress, line.refused] as [string, number]);

  refused("203.0.113.9");
  assert.deepEqual(logged(), [["203.0.113.9", 1]], "the first refusal is logged at once");
  const [first] = log.entries();
  assert.equal(first.level, 40, "at warn");
  assert.match(first.msg, /per-client connection limit/);
  assert.equal(first.perClient, 2);
  for (let i = 0; i < 500; i++) refused("203.0.113.9");
  refused("198.51.100.7");
  assert.equal(logged().length, 2, "a flood is one line per client, not one per connection");

  mock.timers.tick(1000);
  assert.deepEqual(logged().slice(2), [["203.0.113.9", 500]], "the interval's count, in one line");
  refused("203.0.113.9");
  mock.timers.tick(1000);
  assert.deepEqual(logged().slice(3), [["203.0.113.9", 1]]);
  mock.timers.tick(1000);
  assert.equal(logged().length, 4, "a quiet interval writes nothing");
  refused("203.0.113.9");
  assert.deepEqual(logged().slice(4), [["203.0.113.9", 1]], "after a quiet interval, at once");
});
