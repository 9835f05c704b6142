// Two replicas of every service behind nginx on one PostgreSQL and one Redis (test/scale-out),
// each replica with its own /data as on its own machine: what a user sees is the same whichever
// replica answers, and a replica killed mid-journey costs no acknowledged write.
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { gatewayV1, memoryV1 } from "@atrium/api";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
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
    MEMORY_GRPC_PORT: await freePort(),
    GATEWAY_GRPC_PORT: await freePort(),
  };
  const keys = {
    API_KEYS: `bk_${randomBytes(16).toString("hex")}`,
    ATRIUM_MEMORY_API_KEY: `mk_${randomBytes(16).toString("hex")}`,
    ATRIUM_AGENT_API_KEY: `ak_${randomBytes(16).toString("hex")}`,
  };
  const gatewayKey = `gw_${randomBytes(16).toString("hex")}`;
  const providerKey = `pk_${randomBytes(16).toString("hex")}`;
  const envFile = join(dir, ".env");
  await writeFile(
    envFile,
    Object.entries({
      ATRIUM_VERSION: version,
      POSTGRES_PASSWORD: randomBytes(12).toString("hex"),
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      STATE_KEY: randomBytes(32).toString("hex"),
      GATEWAY_API_KEYS: gatewayKey,
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
    memoryGrpc: `http://127.0.0.1:${ports.MEMORY_GRPC_PORT}`,
    gatewayGrpc: `http://127.0.0.1:${ports.GATEWAY_GRPC_PORT}`,
  };
  for (const url of [proxy.memory, proxy.broker, proxy.agent, proxy.gateway])
    await waitHealthy(`${url}/health`, 180_000);
  const memory = [await replica("memory-a", 8080), await replica("memory-b", 8080)];
  const broker = [await replica("broker-a", 8081), await replica("broker-b", 8081)];
  const agent = [await replica("agent-a", 8000), await replica("agent-b", 8000)];
  const gateway = [await replica("gateway-a", 8082), await replica("gateway-b", 8082)];
  const toMemory = { "x-api-key": keys.ATRIUM_MEMORY_API_KEY, "content-type": "application/json" };
  const toAgent = { "x-api-key": keys.ATRIUM_AGENT_API_KEY, "content-type": "application/json" };
  const toBroker = { "x-api-key": keys.API_KEYS, "content-type": "application/json" };
  const toGateway = { "x-api-key": gatewayKey, "content-type": "application/json" };
  const grpcHeaders = (key: string) => ({ "x-api-key": key });

  // The issue's 13 checks, in a journey: each names what a user sees whichever replica answers.
  // Later checks build on what earlier ones wrote; every one runs and is reported, and the test
  // fails unless all 13 hold.
  const checks: [string, () => Promise<void>][] = [];
  const check = (name: string, body: () => Promise<void>) => checks.push([name, body]);
  let sessionId = "";
  let stepId = "";
  let types: string[] = [];
  let connectionId = "";
  const workflowId = `scale_${process.pid}`;
  const chatMessage = "Run this: ```js\nconsole.log([3,1,2].sort())\n```";
  const window = async (base: string) =>
    JSON.stringify(
      await json(
        await fetch(`${base}/api/v1/sessions/${sessionId}/context?limit=1000`, {
          headers: toMemory,
        }),
      ),
    );
  const tokenAudits = async () =>
    (
      (await json(
        await fetch(`${broker[0]}/audit?event_type=token.retrieved&limit=100`, {
          headers: toBroker,
        }),
      )) as { events: unknown[] }
    ).events.length;

  /** The broker token reads a gateway replica made over gRPC, from its /metrics. */
  const brokerTokenCallsOverGrpc = async (base: string) => {
    const text = await (await fetch(`${base}/metrics`)).text();
    let calls = 0;
    for (const line of text.split("\n")) {
      if (
        line.startsWith("atrium_gateway_broker_calls_total{") &&
        line.includes('transport="grpc"') &&
        /method="[^"]*token/i.test(line)
      ) {
        calls += Number(line.slice(line.lastIndexOf(" ") + 1));
      }
    }
    return calls;
  };

  // GetSession is Planned (501) in the contract: a session is known to a replica when it takes
  // turns in it, and an id no replica created is 404.
  check("memory: a session created on replica A is known to replica B", async () => {
    ({ session_id: sessionId } = (await json(
      await fetch(`${memory[0]}/api/v1/sessions`, {
        method: "POST",
        headers: toMemory,
        body: JSON.stringify({ tenant_id: "acme", user_id: "alice", agent_id: "scale" }),
      }),
    )) as { session_id: string });
    const turnOn = (id: string) =>
      fetch(`${memory[1]}/api/v1/sessions/${id}/interactions`, {
        method: "POST",
        headers: toMemory,
        body: JSON.stringify({ user_message: "Alice packs for Porto", agent_response: "ok" }),
      });
    await json(await turnOn(sessionId));
    const unknown = await turnOn(randomUUID());
    await unknown.arrayBuffer();
    assert.equal(unknown.status, 404);
  });
  check("memory: a turn written on A is in the STM window read on B", async () => {
    await json(
      await fetch(`${memory[0]}/api/v1/sessions/${sessionId}/interactions`, {
        method: "POST",
        headers: toMemory,
        body: JSON.stringify({ user_message: "Bob Miller flies to Lisbon", agent_response: "ok" }),
      }),
    );
    assert.match(await window(memory[1]), /Alice packs for Porto.*Bob Miller flies to Lisbon/s);
  });
  check("memory: search on B finds the turn written on A", async () => {
    const found = await json(
      await fetch(`${memory[1]}/api/v1/sessions/${sessionId}/context/search`, {
        method: "POST",
        headers: toMemory,
        body: JSON.stringify({ query: "Who flies to Lisbon?", limit: 5 }),
      }),
    );
    assert.match(JSON.stringify(found), /Bob Miller flies to Lisbon/);
  });
  check("chat: a stream opened on host A sees the step run on host B", async () => {
    const streamed = streamUntilComplete(
      `${agent[0]}/api/v1/chat/stream/${workflowId}`,
      keys.ATRIUM_AGENT_API_KEY,
    );
    const step = (await json(
      await fetch(`${agent[1]}/api/v1/chat`, {
        method: "POST",
        headers: toAgent,
        body: JSON.stringify({
          message: chatMessage,
          workflow_id: workflowId,
          context: { session_id: sessionId },
        }),
      }),
    )) as { step_id: string; status: string };
    stepId = step.step_id;
    assert.equal(step.status, "success");
    types = await streamed;
    assert.equal(types.at(-1), "step_complete");
  });
  check("chat: the step's turn reached memory over gRPC through the load balancer", async () => {
    // Host B reaches memory only through `lb` (MEMORY_GRPC_URL=http://lb:9090).
    for (const base of memory) assert.ok((await window(base)).includes("[3,1,2].sort()"), base);
  });
  const historyOn = async (base: string) =>
    (
      (await json(
        await fetch(`${base}/api/v1/chat/history/${workflowId}/${stepId}`, { headers: toAgent }),
      )) as { events: { type: string }[] }
    ).events.map((e) => e.type);
  const listedOn = async (base: string) =>
    (
      (await json(await fetch(`${base}/api/v1/chat/workflows`, { headers: toAgent }))) as {
        workflows: { workflow_id: string }[];
      }
    ).workflows.some((w) => w.workflow_id === workflowId);
  check(
    "chat: history of the step on the host that did not run it (and on the one that did)",
    async () => {
      for (const base of agent) assert.deepEqual(await historyOn(base), types, base);
    },
  );
  check("chat: GET /chat/workflows lists the workflow on both hosts", async () => {
    for (const base of agent) assert.ok(await listedOn(base), `${base}: workflow not listed`);
  });
  check(
    "chat: history and the workflow list through the proxy, alike 4 times in a row",
    async () => {
      for (let round = 0; round < 4; round++) {
        assert.deepEqual(await historyOn(proxy.agent), types, `round ${round}`);
        assert.ok(await listedOn(proxy.agent), `round ${round}: workflow not listed`);
      }
    },
  );
  check("broker: a provider created on replica A is read on replica B", async () => {
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
  });
  check("broker: the audit log read on B records the creation on A", async () => {
    const audit = (await json(
      await fetch(`${broker[1]}/audit?event_type=provider.created&limit=10`, {
        headers: toBroker,
      }),
    )) as { events: unknown[] };
    assert.equal(audit.events.length, 1);
  });
  check(
    "gateway: a key captured through gateway A is read through A and B, each read audited",
    async () => {
      // The stack has no third-party API to validate a key against: the provider's API is the
      // broker's own /health (loopback, the only plain http a provider may name), which answers 200.
      const provider = await json(
        await fetch(`${broker[1]}/providers`, {
          method: "POST",
          headers: toBroker,
          body: JSON.stringify({
            name: "keyed",
            auth_type: "api_key",
            api_base_url: "http://127.0.0.1:8081/health",
          }),
        }),
      );
      const connection = await json(
        await fetch(`${gateway[0]}/v1/capture-credential`, {
          method: "POST",
          headers: toGateway,
          body: JSON.stringify({
            provider_id: provider.id,
            workspace_id: "w1",
            api_key: providerKey,
          }),
        }),
      );
      connectionId = String(connection.id);
      assert.equal(connection.status, "active");
      const before = await tokenAudits();
      for (const base of gateway) {
        const token = await json(
          await fetch(`${base}/v1/token/${connectionId}`, { headers: toGateway }),
        );
        assert.equal(token.api_key, providerKey, base);
      }
      assert.equal((await tokenAudits()) - before, 2);
    },
  );
  check(
    "gRPC through the load balancer: memory's GetContext and the gateway's GetToken, 4 times each",
    async () => {
      const memoryClient = createClient(
        memoryV1.MemoryService,
        createGrpcTransport({ baseUrl: proxy.memoryGrpc }),
      );
      const gatewayClient = createClient(
        gatewayV1.GatewayService,
        createGrpcTransport({ baseUrl: proxy.gatewayGrpc }),
      );
      const before = await tokenAudits();
      const callsBefore = await Promise.all(gateway.map(brokerTokenCallsOverGrpc));
      for (let round = 0; round < 4; round++) {
        const context = await memoryClient.getContext(
          { sessionId, limit: 1000 },
          { headers: grpcHeaders(keys.ATRIUM_MEMORY_API_KEY) },
        );
        assert.ok(
          context.stmEvents.some((e) => e.content === "Bob Miller flies to Lisbon"),
          `round ${round}`,
        );
        const token = await gatewayClient.getToken(
          { connectionId },
          { headers: grpcHeaders(gatewayKey) },
        );
        assert.equal(token.apiKey, providerKey, `round ${round}`);
      }
      assert.equal((await tokenAudits()) - before, 4);
      // Each call was its own stream through the proxy: both gateways answered, and each reached
      // the broker over gRPC (through `lb`), none falling back to REST.
      const callsAfter = await Promise.all(gateway.map(brokerTokenCallsOverGrpc));
      const served = callsAfter.map((n, i) => n - callsBefore[i]);
      assert.ok(
        served.every((n) => n > 0),
        `broker token reads over gRPC per gateway: ${served}`,
      );
      assert.equal(served[0] + served[1], 4, `broker token reads over gRPC per gateway: ${served}`);
    },
  );
  check("a memory replica killed (SIGKILL) mid-write loses no acknowledged write", async () => {
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
    // The chat hosts go on through `lb` to the replica left.
    const step = (await json(
      await fetch(`${proxy.agent}/api/v1/chat`, {
        method: "POST",
        headers: toAgent,
        body: JSON.stringify({
          message: chatMessage,
          workflow_id: `${workflowId}_after`,
          context: { session_id: sessionId },
        }),
      }),
    )) as { status: string };
    assert.equal(step.status, "success");
  });

  const results: { name: string; error?: unknown }[] = [];
  for (const [name, body] of checks) {
    try {
      await body();
      results.push({ name });
    } catch (error) {
      results.push({ name, error });
    }
  }
  const held = results.filter((r) => !r.error).length;
  console.log(
    [
      `scale-out checks: ${held}/${checks.length}`,
      ...results.map(
        (r, n) =>
          `  ${r.error ? "FAIL" : "ok  "} ${n + 1}. ${r.name}${r.error ? `: ${String((r.error as Error).message ?? r.error).split("\n")[0]}` : ""}`,
      ),
    ].join("\n"),
  );
  assert.equal(checks.length, 13);
  const failed = results.filter((r) => r.error);
  if (failed.length > 0) throw failed[0].error;
});
