import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { connect as http2Connect } from "node:http2";
import { connect, type Socket } from "node:net";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createTestPostgres, needsServer, type TestPostgres } from "@atrium/kit/testing";
import { freePort } from "../gateway-tcp-proxy.js";

/**
 * `atrium serve memory` as an orchestrator runs it, SIGTERMed while 16 keep-alive clients write
 * as fast as they are answered, one client holds a write in flight, one a half-sent request it
 * never finishes, one an idle keep-alive socket and one an idle HTTP/2 session on the gRPC port.
 * It must finish the write in flight (answering it `Connection: close`), lose no acknowledged
 * write, and exit 0 within SHUTDOWN_GRACE_MS.
 */
const graceMs = 5000;
const root = new URL("../../", import.meta.url).pathname;
let pg: TestPostgres | undefined;
after(() => pg?.drop());

/** Whether a new connection to the port is accepted: false once the server stopped listening. */
function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(port, "127.0.0.1");
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
}

/** Everything the server sends on the socket until it closes it. */
function received(socket: Socket): Promise<string> {
  let text = "";
  socket.on("data", (d) => {
    text += d;
  });
  return new Promise((resolve) => socket.once("close", () => resolve(text)));
}

test("SIGTERM under load with keep-alive clients drains and exits within the grace", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  pg = await createTestPostgres();
  const [restPort, grpcPort] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [
      "--conditions=atrium-source",
      "--import",
      "tsx",
      "packages/server/src/main.ts",
      "serve",
      "memory",
    ],
    {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: pg.url,
        MEMORY_HOST: "127.0.0.1",
        MEMORY_REST_PORT: String(restPort),
        MEMORY_GRPC_PORT: String(grpcPort),
        MEMORY_PROMOTER_INTERVAL: "1h",
        SHUTDOWN_GRACE_MS: String(graceMs),
      },
    },
  );
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once("exit", (code) => resolve({ code, at: performance.now() })),
  );
  const rest = `http://127.0.0.1:${restPort}`;
  const deadline = Date.now() + 30_000;
  while (
    !(await fetch(`${rest}/health`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    assert.ok(Date.now() < deadline && child.exitCode === null, `service did not start: ${output}`);
    await sleep(50);
  }
  const session = (await fetch(`${rest}/api/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ tenant_id: "drain", user_id: "u" }),
  }).then((r) => r.json())) as { session_id: string };

  // A write in flight at SIGTERM by construction: its headers are routed (the server's
  // `100 Continue` says so) and all but the last byte of its body sent before the signal; the
  // last byte goes once the server has stopped accepting, so it is answered while draining.
  const heldKey = "held";
  const heldBody = JSON.stringify({ user_message: heldKey });
  const held = connect(restPort, "127.0.0.1");
  held.on("error", () => {});
  const heldAnswer = received(held);
  const continued = new Promise<string>((resolve) => held.once("data", (d) => resolve(String(d))));
  held.write(
    `POST /api/v1/sessions/${session.session_id}/interactions HTTP/1.1\r\nHost: x\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(heldBody)}\r\n` +
      "Expect: 100-continue\r\n\r\n",
  );
  assert.match(await continued, /^HTTP\/1\.1 100 Continue\r\n/);
  held.write(heldBody.slice(0, -1));

  // Clients that hold connections open: a half-sent request, an idle keep-alive socket, an idle
  // HTTP/2 session.
  const halfSent = connect(restPort, "127.0.0.1");
  halfSent.on("error", () => {});
  halfSent.write(`POST /api/v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"ten`);
  const idle = connect(restPort, "127.0.0.1");
  idle.on("error", () => {});
  idle.write("GET /health HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n");
  const h2 = http2Connect(`http://127.0.0.1:${grpcPort}`);
  h2.on("error", () => {});

  let stopping = false;
  let signalledAt = 0;
  const acknowledged: string[] = [];
  let n = 0;
  const writer = async () => {
    while (!stopping || performance.now() - signalledAt < graceMs) {
      const key = `d-${n++}`;
      try {
        const res = await fetch(`${rest}/api/v1/sessions/${session.session_id}/interactions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ user_message: key }),
          signal: AbortSignal.timeout(graceMs + 2000),
        });
        await res.arrayBuffer();
        if (res.status === 200) acknowledged.push(key);
      } catch {
        // Refused or cut once the server stopped listening: not acknowledged.
        if (stopping) return;
      }
    }
  };
  const writers = Array.from({ length: 16 }, writer);
  await sleep(1000);
  stopping = true;
  signalledAt = performance.now();
  child.kill("SIGTERM");
  while (await accepting(restPort)) await sleep(10);
  held.write(heldBody.slice(-1));
  const heldResponse = (await heldAnswer).replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, "");
  const { code, at } = await exited;
  await Promise.all(writers);
  halfSent.destroy();
  idle.destroy();
  h2.destroy();

  const tookMs = at - signalledAt;
  assert.equal(code, 0, `exit code; output:\n${output}`);
  assert.ok(tookMs <= graceMs, `exited ${tookMs.toFixed(0)} ms after SIGTERM`);
  assert.ok(acknowledged.length > 50, `${acknowledged.length} writes acknowledged`);
  assert.match(heldResponse, /^HTTP\/1\.1 200 /, "the write in flight at SIGTERM was answered");
  assert.match(heldResponse, /\r\nconnection: close\r\n/i, "it was answered Connection: close");
  acknowledged.push(heldKey);
  const { rows } = await pg.sql.query<{ content: string }>(
    "SELECT content FROM memory_events WHERE role = 'user'",
  );
  const stored = new Set(rows.map((r) => r.content));
  assert.deepEqual(
    acknowledged.filter((key) => !stored.has(key)),
    [],
    "every acknowledged write is stored",
  );
});
