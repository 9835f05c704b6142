// Two replicas of every service behind nginx on one PostgreSQL and one Redis (test/scale-out),
// each replica with its own /data as on its own machine: what a user sees is the same whichever
// replica answers, and a replica killed mid-journey costs no acknowledged write.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import {
  buildImage,
  freePort,
  json,
  needsDocker,
  run,
  runOk,
  streamUntilComplete,
  version,
  waitHealthy,
} from "./deploy-harness.js";

const nginxImage = `FROM debian:bookworm-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx \\
 && rm -rf /var/lib/apt/lists/*
CMD ["nginx", "-g", "daemon off;"]
`;

test("two replicas of every service answer alike and lose nothing when one is killed", {
  timeout: 45 * 60_000,
}, async (t) => {
  const docker = await needsDocker(t);
  if (!docker) return;
  await buildImage(docker);
  if ((await run("docker", ["image", "inspect", "atrium-test-nginx"])).code !== 0) {
    const dir = await mkdtemp(join(tmpdir(), "atrium-nginx-"));
    await writeFile(join(dir, "Dockerfile"), nginxImage);
    await runOk("docker", ["build", "-q", "-t", "atrium-test-nginx", dir], { timeoutMs: 600_000 });
    await rm(dir, { recursive: true, force: true });
  }

  const dir = await mkdtemp(join(tmpdir(), "atrium-scale-"));
  const project = `atrium_scale_${process.pid}`;
  const ports = {
    MEMORY_REST_PORT: await freePort(),
    BROKER_REST_PORT: await freePort(),
    AGENT_PORT: await freePort(),
    GATEWAY_REST_PORT: await freePort(),
  };
  const keys = {
    API_KEYS: `bk_${randomBytes(16).toString("hex")}`,
    ATRIUM_MEMORY_API_KEY: `mk_${randomBytes(16).toString("hex")}`,
    ATRIUM_AGENT_API_KEY: `ak_${randomBytes(16).toString("hex")}`,
  };
  const envFile = join(dir, ".env");
  await writeFile(
    envFile,
    Object.entries({
      ATRIUM_VERSION: version,
      POSTGRES_PASSWORD: randomBytes(12).toString("hex"),
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      STATE_KEY: randomBytes(32).toString("hex"),
      GATEWAY_API_KEYS: `gw_${randomBytes(16).toString("hex")}`,
      ...keys,
      ...ports,
    })
      .map(([name, value]) => `${name}=${value}\n`)
      .join(""),
    { mode: 0o600 },
  );
  const compose = (args: string[], timeoutMs = 600_000) =>
    runOk(
      docker.compose[0],
      [
        ...docker.compose.slice(1),
        ...["-p", project, "-f", "test/scale-out/docker-compose.yml", "--env-file", envFile],
        ...args,
      ],
      { timeoutMs },
    );
  t.after(async () => {
    await compose(["down", "-v", "--remove-orphans", "-t", "5"]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });
  await compose(["up", "-d"]);

  /** A replica's own address on the stack's network, bypassing the proxy. */
  const replica = async (name: string, port: number) => {
    const id = (await compose(["ps", "-q", name])).trim();
    const ip = await runOk("docker", [
      "inspect",
      "-f",
      "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
      id,
    ]);
    return `http://${ip.trim()}:${port}`;
  };
  const proxy = {
    memory: `http://127.0.0.1:${ports.MEMORY_REST_PORT}`,
    broker: `http://127.0.0.1:${ports.BROKER_REST_PORT}`,
    agent: `http://127.0.0.1:${ports.AGENT_PORT}`,
    gateway: `http://127.0.0.1:${ports.GATEWAY_REST_PORT}`,
  };
  for (const url of Object.values(proxy)) await waitHealthy(`${url}/health`, 180_000);
  const memory = [await replica("memory-a", 8080), await replica("memory-b", 8080)];
  const broker = [await replica("broker-a", 8081), await replica("broker-b", 8081)];
  const agent = [await replica("agent-a", 8000), await replica("agent-b", 8000)];
  const toMemory = { "x-api-key": keys.ATRIUM_MEMORY_API_KEY, "content-type": "application/json" };
  const toAgent = { "x-api-key": keys.ATRIUM_AGENT_API_KEY, "content-type": "application/json" };
  const toBroker = { "x-api-key": keys.API_KEYS, "content-type": "application/json" };

  // Memory: a session and a turn written on one replica are read, windowed and found on the other.
  const { session_id: sessionId } = (await json(
    await fetch(`${memory[0]}/api/v1/sessions`, {
      method: "POST",
      headers: toMemory,
      body: JSON.stringify({ tenant_id: "acme", user_id: "alice", agent_id: "scale" }),
    }),
  )) as { session_id: string };
  await json(
    await fetch(`${memory[0]}/api/v1/sessions/${sessionId}/interactions`, {
      method: "POST",
      headers: toMemory,
      body: JSON.stringify({ user_message: "Bob Miller flies to Lisbon", agent_response: "ok" }),
    }),
  );
  const window = async (base: string) =>
    JSON.stringify(
      await json(
        await fetch(`${base}/api/v1/sessions/${sessionId}/context?limit=1000`, {
          headers: toMemory,
        }),
      ),
    );
  assert.match(await window(memory[1]), /Bob Miller flies to Lisbon/);
  const found = await json(
    await fetch(`${memory[1]}/api/v1/sessions/${sessionId}/context/search`, {
      method: "POST",
      headers: toMemory,
      body: JSON.stringify({ query: "Who flies to Lisbon?", limit: 5 }),
    }),
  );
  assert.match(JSON.stringify(found), /Lisbon/);

  // Chat: a stream on one agent host sees the step run on the other; history and the workflow
  // list answer on both, and through the proxy every time.
  const workflowId = `scale_${process.pid}`;
  const streamed = streamUntilComplete(
    `${agent[0]}/api/v1/chat/stream/${workflowId}`,
    keys.ATRIUM_AGENT_API_KEY,
  );
  const { step_id: stepId } = (await json(
    await fetch(`${agent[1]}/api/v1/chat`, {
      method: "POST",
      headers: toAgent,
      body: JSON.stringify({ message: "hello there", workflow_id: workflowId }),
    }),
  )) as { step_id: string };
  const types = await streamed;
  assert.equal(types.at(-1), "step_complete");
  for (const base of [...agent, proxy.agent, proxy.agent, proxy.agent, proxy.agent]) {
    const history = (await json(
      await fetch(`${base}/api/v1/chat/history/${workflowId}/${stepId}`, { headers: toAgent }),
    )) as { events: { type: string }[] };
    assert.deepEqual(
      history.events.map((e) => e.type),
      types,
      base,
    );
    const list = (await json(
      await fetch(`${base}/api/v1/chat/workflows`, { headers: toAgent }),
    )) as { workflows: { workflow_id: string }[] };
    assert.ok(
      list.workflows.some((w) => w.workflow_id === workflowId),
      `${base}: workflow not listed`,
    );
  }

  // Broker: a provider created on one replica is listed, and audited, on the other.
  await json(
    await fetch(`${broker[0]}/providers`, {
      method: "POST",
      headers: toBroker,
      body: JSON.stringify({
        name: "github",
        auth_type: "oauth2",
        client_id: "Iv1.x",
        client_secret: "s",
        auth_url: "https://github.com/login/oauth/authorize",
        token_url: "https://github.com/login/oauth/access_token",
        scopes: ["repo"],
      }),
    }),
  );
  assert.match(
    JSON.stringify(await json(await fetch(`${broker[1]}/providers`, { headers: toBroker }))),
    /"github"/,
  );
  const audit = (await json(
    await fetch(`${broker[1]}/audit?event_type=provider.created&limit=10`, { headers: toBroker }),
  )) as { events: unknown[] };
  assert.equal(audit.events.length, 1);

  // A memory replica killed (SIGKILL, no drain) during writes through the proxy: every write
  // that was acknowledged is there afterwards, read through the replica left.
  const acknowledged: string[] = [];
  let sent = 0;
  const lane = async () => {
    while (sent < 120) {
      const text = `scale turn ${sent++}`;
      try {
        const res = await fetch(`${proxy.memory}/api/v1/sessions/${sessionId}/interactions`, {
          method: "POST",
          headers: toMemory,
          body: JSON.stringify({ user_message: text, agent_response: "ok" }),
          signal: AbortSignal.timeout(10_000),
        });
        if (res.ok) acknowledged.push(text);
        else await res.arrayBuffer();
      } catch {
        // Not acknowledged: the client would retry it.
      }
    }
  };
  const lanes = [lane(), lane(), lane(), lane()];
  while (acknowledged.length < 20 && sent < 120) await new Promise((r) => setTimeout(r, 10));
  await compose(["kill", "-s", "SIGKILL", "memory-a"]);
  await Promise.all(lanes);
  assert.ok(acknowledged.length > 20, `only ${acknowledged.length} writes acknowledged`);
  const after = await window(memory[1]);
  const lost = acknowledged.filter((text) => !after.includes(`"${text}"`));
  assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged writes lost`);
});
