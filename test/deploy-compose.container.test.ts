// The image and deploy/compose as an operator runs them: build, `up`, a user's journey through
// memory, chat and the broker, SIGTERM to every service, `up` again, and everything acknowledged
// before the stop is still there.
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
  runOk,
  streamUntilComplete,
  waitHealthy,
} from "./deploy-harness.js";

const services = ["memory", "broker", "agent", "gateway"] as const;

test("the Compose stack serves a user's journey and keeps it across a SIGTERM stop", {
  timeout: 45 * 60_000,
}, async (t) => {
  const docker = await needsDocker(t);
  if (!docker) return;
  await buildImage(docker);

  const dir = await mkdtemp(join(tmpdir(), "atrium-compose-"));
  const project = `atrium_ci_${process.pid}`;
  const ports = {
    MEMORY_REST_PORT: await freePort(),
    MEMORY_GRPC_PORT: await freePort(),
    BROKER_REST_PORT: await freePort(),
    BROKER_GRPC_PORT: await freePort(),
    AGENT_PORT: await freePort(),
    GATEWAY_REST_PORT: await freePort(),
    GATEWAY_GRPC_PORT: await freePort(),
  };
  const brokerKey = `bk_${randomBytes(16).toString("hex")}`;
  const gatewayKey = `gw_${randomBytes(16).toString("hex")}`;
  const memoryKey = `mk_${randomBytes(16).toString("hex")}`;
  const agentKey = `ak_${randomBytes(16).toString("hex")}`;
  const envFile = join(dir, ".env");
  await writeFile(
    envFile,
    [
      `POSTGRES_PASSWORD=${randomBytes(12).toString("hex")}`,
      `API_KEYS=${brokerKey}`,
      `ENCRYPTION_KEY=${randomBytes(32).toString("base64")}`,
      `STATE_KEY=${randomBytes(32).toString("hex")}`,
      `GATEWAY_API_KEYS=${gatewayKey}`,
      `ATRIUM_MEMORY_API_KEY=${memoryKey}`,
      `ATRIUM_AGENT_API_KEY=${agentKey}`,
      ...Object.entries(ports).map(([name, port]) => `${name}=${port}`),
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  const compose = (args: string[], timeoutMs = 300_000) =>
    runOk(
      docker.compose[0],
      [
        ...docker.compose.slice(1),
        "-p",
        project,
        "-f",
        "deploy/compose/docker-compose.yml",
        "--env-file",
        envFile,
        ...args,
      ],
      { timeoutMs },
    );
  t.after(async () => {
    await compose(["down", "-v", "--remove-orphans", "-t", "5"]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  const memory = `http://127.0.0.1:${ports.MEMORY_REST_PORT}`;
  const broker = `http://127.0.0.1:${ports.BROKER_REST_PORT}`;
  const agent = `http://127.0.0.1:${ports.AGENT_PORT}/api/v1`;
  const gateway = `http://127.0.0.1:${ports.GATEWAY_REST_PORT}`;
  const up = async () => {
    await compose(["up", "-d", "--no-build"], 600_000);
    for (const url of [memory, broker, `${agent.replace("/api/v1", "")}`, gateway]) {
      await waitHealthy(`${url}/health`, 180_000);
    }
  };
  await up();

  // The containers run as the image's user, on a read-only root filesystem.
  for (const service of services) {
    const id = (await compose(["ps", "-q", service])).trim();
    const config = await runOk("docker", [
      "inspect",
      "-f",
      "{{.Config.User}} {{.HostConfig.ReadonlyRootfs}}",
      id,
    ]);
    assert.equal(config.trim(), "10001:10001 true", service);
  }

  const toMemory = { "x-api-key": memoryKey, "content-type": "application/json" };
  const toAgent = { "x-api-key": agentKey, "content-type": "application/json" };

  // Memory: a turn stored, then found by search.
  const { session_id: sessionId } = (await json(
    await fetch(`${memory}/api/v1/sessions`, {
      method: "POST",
      headers: toMemory,
      body: JSON.stringify({ tenant_id: "acme", user_id: "alice", agent_id: "travel" }),
    }),
  )) as { session_id: string };
  await json(
    await fetch(`${memory}/api/v1/sessions/${sessionId}/interactions`, {
      method: "POST",
      headers: toMemory,
      body: JSON.stringify({
        user_message: "I am flying to Lisbon with Bob Miller in May",
        agent_response: "Noted.",
      }),
    }),
  );
  const search = async () =>
    JSON.stringify(
      await json(
        await fetch(`${memory}/api/v1/sessions/${sessionId}/context/search`, {
          method: "POST",
          headers: toMemory,
          body: JSON.stringify({ query: "Who is travelling with Bob Miller?", limit: 5 }),
        }),
      ),
    );
  assert.match(await search(), /Lisbon/);

  // Chat: a step, its live stream and its history.
  const workflowId = `compose_${process.pid}`;
  const streamed = streamUntilComplete(`${agent}/chat/stream/${workflowId}`, agentKey);
  const { step_id: stepId, status } = (await json(
    await fetch(`${agent}/chat`, {
      method: "POST",
      headers: toAgent,
      body: JSON.stringify({
        message: "Run this: ```js\nconsole.log([3,1,2].sort())\n```",
        workflow_id: workflowId,
      }),
    }),
  )) as { step_id: string; status: string };
  assert.equal(status, "success");
  const types = await streamed;
  assert.equal(types.at(-1), "step_complete");
  const history = async () =>
    (
      (await json(
        await fetch(`${agent}/chat/history/${workflowId}/${stepId}`, { headers: toAgent }),
      )) as {
        events: { type: string }[];
      }
    ).events.map((e) => e.type);
  assert.deepEqual(await history(), types);

  // Broker: a provider created, and its creation audited.
  const key = { "x-api-key": brokerKey, "content-type": "application/json" };
  await json(
    await fetch(`${broker}/providers`, {
      method: "POST",
      headers: key,
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
  const audited = async () =>
    (
      (await json(
        await fetch(`${broker}/audit?event_type=provider.created&limit=10`, { headers: key }),
      )) as { events: unknown[] }
    ).events.length;
  assert.equal(await audited(), 1);

  // The console, through the gateway.
  const consolePage = await fetch(`${gateway}/console/`);
  assert.equal(consolePage.status, 200);
  assert.match(await consolePage.text(), /<html/i);

  // SIGTERM to memory while writes are in flight: every write it acknowledged survives.
  const memoryId = (await compose(["ps", "-q", "memory"])).trim();
  const acknowledged: string[] = [];
  let sent = 0;
  const lane = async () => {
    while (sent < 100) {
      const text = `burst turn ${sent++}`;
      try {
        const res = await fetch(`${memory}/api/v1/sessions/${sessionId}/interactions`, {
          method: "POST",
          headers: toMemory,
          body: JSON.stringify({ user_message: text, agent_response: "ok" }),
          signal: AbortSignal.timeout(10_000),
        });
        if (res.ok) acknowledged.push(text);
        else await res.arrayBuffer();
      } catch {
        return; // the server is gone: nothing more is acknowledged
      }
    }
  };
  const lanes = [lane(), lane(), lane(), lane()];
  while (acknowledged.length < 10 && sent < 100) await new Promise((r) => setTimeout(r, 10));
  await runOk("docker", ["kill", "-s", "TERM", memoryId]);
  await Promise.all(lanes);
  assert.ok(acknowledged.length >= 10, `only ${acknowledged.length} writes acknowledged`);

  // SIGTERM to every service: each drains and exits 0 within its grace period.
  await compose(["stop", "-t", "30", ...services]);
  for (const service of services) {
    const id = (await compose(["ps", "-a", "-q", service])).trim();
    const state = await runOk("docker", ["inspect", "-f", "{{.State.ExitCode}}", id]);
    assert.equal(state.trim(), "0", `${service} did not exit cleanly after SIGTERM`);
  }

  await up();
  assert.match(await search(), /Lisbon/);
  const window = JSON.stringify(
    await json(
      await fetch(`${memory}/api/v1/sessions/${sessionId}/context?limit=1000`, {
        headers: toMemory,
      }),
    ),
  );
  const lost = acknowledged.filter((text) => !window.includes(`"${text}"`));
  assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged writes lost`);
  assert.deepEqual(await history(), types);
  assert.equal(await audited(), 1);
  const providers = JSON.stringify(
    await json(await fetch(`${broker}/providers`, { headers: key })),
  );
  assert.match(providers, /"github"/);
});
