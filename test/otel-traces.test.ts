import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import {
  otlpAttribute as attribute,
  createTestPostgres,
  eventually,
  type OtlpSpan,
  serverAvailable,
  startOtlpReceiver,
} from "@atrium/kit/testing";
import { freePortOffset, spawnAtriumStart } from "./atrium-start-env.js";

// OpenTelemetry end to end: `atrium start` with OTEL_EXPORTER_OTLP_ENDPOINT pointed at an OTLP/HTTP
// receiver in this test (the JSON encoding). A request sent to the gateway with a W3C traceparent
// yields spans of one trace in the gateway, the gateway's outbound call and the service it
// called: memory over REST (fetch), the broker over gRPC; a chat step's trace reaches memory
// over gRPC; on PostgreSQL, memory's statements are spans too. No attribute holds a key.

const SERVER = 2;
const CLIENT = 3;

test("a request is one trace across gateway, memory, broker and agent host", async (t) => {
  const receiver = await startOtlpReceiver({ traceThisProcess: false });
  t.after(() => receiver.close());
  const { endpoint } = receiver;

  const offset = await freePortOffset(0, 1);
  const dataDir = await mkdtemp(join(tmpdir(), "atrium-otel-"));
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  // On PostgreSQL when it is here, so memory's statements show as spans too.
  const pg = (await serverAvailable("postgres")) ? await createTestPostgres() : undefined;
  t.after(() => pg?.drop());
  const atrium = await spawnAtriumStart({
    ...(pg ? { DATABASE_URL: pg.url } : {}),
    ATRIUM_DATA_DIR: dataDir,
    ATRIUM_PORT_OFFSET: String(offset),
    LOG_LEVEL: "warn",
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "100",
  });
  t.after(() => atrium.stop());
  const devEnv = await readFile(join(dataDir, "dev.env"), "utf8");
  const devKey = (name: string) =>
    (new RegExp(`^${name}=(.*)$`, "m").exec(devEnv)?.[1] ?? "").split(",")[0].trim();
  const gatewayKey = devKey("GATEWAY_API_KEYS");
  const brokerKey = devKey("API_KEYS");
  assert.ok(gatewayKey && brokerKey, "dev.env holds the development keys");
  const gateway = `http://127.0.0.1:${8082 + offset}`;

  const traceId = randomBytes(16).toString("hex");
  const callerSpanId = randomBytes(8).toString("hex");
  const headers = {
    "x-api-key": gatewayKey,
    "content-type": "application/json",
    traceparent: `00-${traceId}-${callerSpanId}-01`,
  };
  // gateway → memory (REST through fetch)
  const search = await fetch(`${gateway}/v1/operator/memory/search`, {
    method: "POST",
    headers,
    body: JSON.stringify({ tenant_id: "acme", user_id: "alice", query: "Lisbon" }),
  });
  assert.equal(search.status, 200, await search.clone().text());
  // gateway → broker (gRPC through kit's client transport), in a trace of its own
  const providersTrace = randomBytes(16).toString("hex");
  const providers = await fetch(`${gateway}/v1/operator/providers`, {
    headers: { ...headers, traceparent: `00-${providersTrace}-${callerSpanId}-01` },
  });
  assert.equal(providers.status, 200, await providers.clone().text());

  // agent host → memory (gRPC through kit's client transport), for a chat step
  const chatTrace = randomBytes(16).toString("hex");
  const chatMessage = "What do you remember about my trip to Lisbon?";
  const chat = await fetch(`http://127.0.0.1:${8000 + offset}/api/v1/chat`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      traceparent: `00-${chatTrace}-${callerSpanId}-01`,
    },
    body: JSON.stringify({ message: chatMessage }),
  });
  assert.equal(chat.status, 200, await chat.clone().text());

  const inTrace = (id: string, scope: string, kind: number) =>
    receiver.spans().find((s) => s.traceId === id && s.scope === scope && s.kind === kind);
  await eventually(
    "the spans of both requests are exported",
    () =>
      inTrace(traceId, "atrium-memory", SERVER) !== undefined &&
      inTrace(providersTrace, "atrium-broker", SERVER) !== undefined &&
      inTrace(chatTrace, "atrium-memory", SERVER) !== undefined &&
      inTrace(chatTrace, "atrium-agent", SERVER) !== undefined &&
      receiver.spans().some((s) => s.traceId === chatTrace && s.name === "invoke_agent chat") &&
      inTrace(traceId, "atrium-gateway", SERVER) !== undefined &&
      inTrace(providersTrace, "atrium-gateway", SERVER) !== undefined,
    15_000,
  );
  const spans = receiver.spans();

  // The gateway's span continues the caller's; memory's continues the gateway's outbound call.
  const gatewaySpan = inTrace(traceId, "atrium-gateway", SERVER);
  assert.ok(gatewaySpan, "the gateway's server span");
  assert.equal(gatewaySpan.parentSpanId, callerSpanId);
  assert.equal(gatewaySpan.name, "POST /v1/operator/memory/search");
  assert.equal(attribute(gatewaySpan, "http.response.status_code"), 200);
  const toMemory = spans.find(
    (s) => s.traceId === traceId && s.kind === CLIENT && s.parentSpanId === gatewaySpan.spanId,
  );
  assert.ok(toMemory, "the gateway's call to memory");
  assert.equal(attribute(toMemory, "url.path"), "/api/v1/operator/search");
  const memorySpan = inTrace(traceId, "atrium-memory", SERVER);
  assert.equal(memorySpan?.parentSpanId, toMemory.spanId);
  assert.equal(memorySpan?.name, "POST /api/v1/operator/search");
  assert.equal(memorySpan?.service, "atrium");

  // Over gRPC: the broker's span continues the gateway's client span of the same RPC.
  const brokerSpan = inTrace(providersTrace, "atrium-broker", SERVER);
  assert.ok(brokerSpan);
  assert.equal(brokerSpan.name, "broker.v1.BrokerService/ListProviders");
  assert.equal(attribute(brokerSpan, "rpc.system"), "grpc");
  const toBroker = spans.find((s) => s.spanId === brokerSpan.parentSpanId);
  assert.equal(toBroker?.kind, CLIENT);
  assert.equal(toBroker?.scope, "atrium-rpc-client");
  assert.equal(toBroker?.name, "broker.v1.BrokerService/ListProviders");
  assert.equal(
    spans.find((s) => s.spanId === toBroker?.parentSpanId)?.name,
    "GET /v1/operator/providers",
  );

  if (pg) {
    const statement = spans.find(
      (s) => s.parentSpanId === memorySpan?.spanId && s.scope === "atrium-sql",
    );
    assert.equal(attribute(statement as OtlpSpan, "db.system.name"), "postgresql");
  }

  // A chat step: the agent host's span, its gRPC call and memory's span of that call.
  const stepSpan = inTrace(chatTrace, "atrium-agent", SERVER);
  assert.equal(stepSpan?.name, "POST /api/v1/chat");
  assert.equal(stepSpan?.parentSpanId, callerSpanId);
  // The step itself, as the GenAI conventions name it, inside the request's span.
  const step = spans.find((s) => s.traceId === chatTrace && s.name === "invoke_agent chat");
  assert.equal(step?.parentSpanId, stepSpan?.spanId);
  assert.equal(attribute(step as OtlpSpan, "gen_ai.operation.name"), "invoke_agent");
  assert.equal(attribute(step as OtlpSpan, "gen_ai.agent.name"), "chat");
  assert.match(String(attribute(step as OtlpSpan, "gen_ai.conversation.id")), /^chat_/);
  const memoryCall = inTrace(chatTrace, "atrium-memory", SERVER);
  assert.match(memoryCall?.name ?? "", /^memory\.v1\.MemoryService\//);
  const agentCall = spans.find((s) => s.spanId === memoryCall?.parentSpanId);
  assert.equal(agentCall?.kind, CLIENT);
  assert.equal(agentCall?.traceId, chatTrace);
  const ancestors = (span: OtlpSpan | undefined): string[] =>
    span?.parentSpanId
      ? [span.parentSpanId, ...ancestors(spans.find((s) => s.spanId === span.parentSpanId))]
      : [];
  assert.ok(ancestors(agentCall).includes(step?.spanId ?? ""), "memory is called within the step");
  // The kernel's memory read: a GenAI execute_tool span of the step, a search_memory CLIENT span
  // inside it (the scope's tenant as the store), and the gRPC call to GetContext inside that.
  const observe = spans.find(
    (s) => s.traceId === chatTrace && s.name === "execute_tool memory.context",
  );
  assert.equal(observe?.parentSpanId, step?.spanId);
  assert.equal(attribute(observe as OtlpSpan, "gen_ai.tool.type"), "datastore");
  const memorySearch = spans.find(
    (s) =>
      s.traceId === chatTrace && s.name === "search_memory" && s.parentSpanId === observe?.spanId,
  );
  assert.equal(memorySearch?.kind, CLIENT);
  assert.equal(attribute(memorySearch as OtlpSpan, "gen_ai.operation.name"), "search_memory");
  assert.equal(attribute(memorySearch as OtlpSpan, "gen_ai.memory.store.id"), "default");
  const count = attribute(memorySearch as OtlpSpan, "gen_ai.memory.record.count");
  assert.ok(count !== undefined && Number.isInteger(Number(count)), "the records returned");
  const getContext = spans.find(
    (s) => s.traceId === chatTrace && s.kind === CLIENT && s.name.endsWith("/GetContext"),
  );
  assert.equal(getContext?.parentSpanId, memorySearch?.spanId);

  // Nothing exported carries a key or a credential header.
  const exported = receiver.bodies.join("\n");
  for (const secret of [gatewayKey, brokerKey]) assert.ok(!exported.includes(secret));
  assert.ok(!exported.includes(chatMessage), "no message or query text");
  assert.doesNotMatch(exported, /x-api-key|authorization/i);
});
