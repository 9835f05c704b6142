import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { type BrokerService, startBrokerService } from "@atrium/broker";
import { testBrokerEnv } from "@atrium/broker/testing";
import { type ChatKernel, createChatRouter, createTraceBus, type TraceBus } from "@atrium/chat";
import { type GatewayService, startGatewayService } from "@atrium/gateway";
import { apiKeyDigestHex, createLogger, createMemoryCache } from "@atrium/kit";
import { createTestPostgres, type TestPostgres } from "@atrium/kit/testing";
import { createGatewayClient, type GatewayClient } from "@atrium/sdk";
import Fastify, { type FastifyInstance } from "fastify";
import { startTestService, type TestService } from "./memory-service-harness.js";

/**
 * Everything /mcp reaches, real and on loopback: memory (PGlite), the chat router with a scripted
 * kernel, the broker (PostgreSQL), the gateway with inbound keys and MCP scopes, and a provider
 * API that only accepts the captured key, next to a host that must never be called.
 */

export interface KernelCall {
  agentId: string;
  context: Record<string, unknown>;
  aborted: boolean;
}

export interface RecordingServer {
  url: string;
  hits: IncomingMessage[];
  close(): Promise<void>;
}

export interface McpStack {
  gatewayUrl: string;
  /** The gateways' configuration, for starting one more elsewhere (a bench's own process). */
  gatewayEnv: Record<string, string>;
  /** The memory service's REST base URL, for calls that skip the gateway. */
  memoryUrl: string;
  /** Another gateway instance with the same configuration. */
  secondGatewayUrl: string;
  broker: BrokerService;
  brokerKey: string;
  /** Keys with a scope: alice in workspace ws-a, bob in ws-b; `unscoped` is a valid key without. */
  keys: { alice: string; bob: string; unscoped: string };
  providerKey: string;
  api: RecordingServer;
  elsewhere: RecordingServer;
  bus: TraceBus;
  kernelCalls: KernelCall[];
  /** Captures the provider key as a connection of the workspace; its id. */
  connect(workspaceId: string): Promise<string>;
  /**
   * Puts a connection in the state the broker's refresher leaves it in after the provider refused
   * a refresh (that transition is the broker's own, tested there).
   */
  markAttention(connectionId: string): Promise<void>;
  /** Every line the gateway and broker logged. */
  logs: string[];
  sdk: GatewayClient;
  stop(): Promise<void>;
}

async function recordingServer(
  respond: (req: IncomingMessage, url: URL, res: import("node:http").ServerResponse) => void,
): Promise<RecordingServer> {
  const hits: IncomingMessage[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(req);
    respond(req, new URL(req.url ?? "/", "http://x"), res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A kernel that reports each step; a task containing "wait" runs until it is cancelled, one
 * containing "approval" yields for an approval and, resumed, answers with the decision.
 */
function scriptedKernel(bus: TraceBus, calls: KernelCall[]): ChatKernel {
  return {
    traceBus: bus,
    async execute(input) {
      const call: KernelCall = { agentId: input.agentId, context: input.context, aborted: false };
      calls.push(call);
      if (input.task.includes("approval")) {
        if (input.resume === undefined) {
          return {
            status: "yield",
            summary: "May I send the email?",
            metadata: {
              pending: [{ kind: "approval", detail: "send the email to bob@example.com" }],
              checkpoint: { drafted: true },
            },
          };
        }
        const decision = input.context.approved === true ? "sent" : "not sent";
        return { status: "success", summary: `email ${decision}`, metadata: {} };
      }
      await input.trace.emit("thinking", { thought: "observe" });
      await input.trace.emit("tool_start", { tool: "search", args: { q: input.task } });
      await input.trace.emit("tool_result", { tool: "search", result: "3 hits" });
      if (input.task.includes("wait")) {
        await new Promise<void>((resolve) => {
          if (input.signal?.aborted) resolve();
          input.signal?.addEventListener("abort", () => resolve(), { once: true });
        });
        call.aborted = input.signal?.aborted ?? false;
        return { status: "failure", summary: "Stopped: the request was cancelled.", metadata: {} };
      }
      await input.trace.emit("thinking", { thought: "answer" });
      return { status: "success", summary: `answer to: ${input.task}`, metadata: {} };
    },
  };
}

export interface McpStackOptions {
  /** Default `debug`, kept in memory: the no-secrets-in-logs test reads every line. */
  logLevel?: "debug" | "info";
  /** More gateway settings (OAuth, say). */
  gatewayEnv?: Record<string, string>;
  /** More scope entries beside alice's and bob's keys. */
  extraScopes?: Record<string, string>[];
  /** A memory service running elsewhere (a bench's own process); default: one in this process. */
  memoryUrl?: string;
  /** The chat router of a real agent host (…/api/v1); default: a scripted kernel in this process. */
  chatUrl?: string;
}

export async function startMcpStack(options: McpStackOptions = {}): Promise<McpStack> {
  const logs: string[] = [];
  const logger = createLogger({
    name: "mcp-e2e",
    level: options.logLevel ?? "debug",
    destination: new Writable({
      write(chunk, _encoding, done) {
        logs.push(String(chunk));
        if (process.env.E2E_LOG) process.stderr.write(chunk);
        done();
      },
    }),
  });
  const cleanups: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  };
  try {
    const providerKey = `provider-secret-${randomBytes(8).toString("hex")}`;
    const elsewhere = await recordingServer((_req, _url, res) => res.end("should never be called"));
    cleanups.push(() => elsewhere.close());
    const api = await recordingServer((req, url, res) => {
      if (req.headers.authorization !== `Bearer ${providerKey}`) {
        res.writeHead(401, { "content-type": "application/json" });
        return res.end('{"error":"unauthorized"}');
      }
      if (url.pathname === "/redirect-off") {
        res.writeHead(302, { location: `${elsewhere.url}/steal` });
        return res.end();
      }
      if (url.pathname === "/redirect-on") {
        res.writeHead(302, { location: "/me" });
        return res.end();
      }
      if (url.pathname === "/echo") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ authorization: req.headers.authorization }));
      }
      if (url.pathname === "/big") {
        res.writeHead(200, { "content-type": "text/plain" });
        return res.end("x".repeat(200_000));
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ user: "alice@example.test", path: url.pathname }));
    });
    cleanups.push(() => api.close());

    let memoryUrl = options.memoryUrl;
    if (memoryUrl === undefined) {
      const memory: TestService = await startTestService();
      cleanups.push(() => memory.stop());
      memoryUrl = memory.service.urls.rest;
    }

    const tracesDir = await mkdtemp(join(tmpdir(), "mcp-traces-"));
    cleanups.push(() => rm(tracesDir, { recursive: true, force: true }));
    const bus = createTraceBus({ cache: createMemoryCache(), tracesDir });
    cleanups.push(() => bus.close());
    const kernelCalls: KernelCall[] = [];
    let chatUrl = options.chatUrl;
    if (chatUrl === undefined) {
      const chat: FastifyInstance = Fastify();
      await chat.register(createChatRouter(scriptedKernel(bus, kernelCalls)), {
        prefix: "/api/v1",
      });
      await chat.listen({ host: "127.0.0.1", port: 0 });
      cleanups.push(() => chat.close());
      chatUrl = `http://127.0.0.1:${(chat.server.address() as AddressInfo).port}/api/v1`;
    }

    const pg: TestPostgres = await createTestPostgres();
    cleanups.push(() => pg.drop());
    const brokerEnv = testBrokerEnv();
    const brokerKey = brokerEnv.API_KEYS;
    const broker = await startBrokerService({ sql: pg.sql, logger, env: brokerEnv });
    cleanups.push(() => broker.stop());

    const keys = {
      alice: `alice-${randomBytes(8).toString("hex")}`,
      bob: `bob-${randomBytes(8).toString("hex")}`,
      unscoped: `plain-${randomBytes(8).toString("hex")}`,
    };
    const gatewayEnv = {
      GATEWAY_HOST: "127.0.0.1",
      GATEWAY_REST_PORT: "0",
      GATEWAY_GRPC_PORT: "0",
      BROKER_URL: broker.urls.rest,
      BROKER_API_KEY: brokerKey,
      GATEWAY_REQUIRE_API_KEY: "true",
      GATEWAY_API_KEYS: Object.values(keys).join(","),
      GATEWAY_MCP_SCOPES: JSON.stringify([
        {
          key_sha256: apiKeyDigestHex(keys.alice),
          tenant_id: "acme",
          user_id: "alice",
          agent_id: "desk",
          workspace_id: "ws-a",
        },
        {
          key_sha256: apiKeyDigestHex(keys.bob),
          tenant_id: "acme",
          user_id: "bob",
          agent_id: "desk",
          workspace_id: "ws-b",
        },
        ...(options.extraScopes ?? []),
      ]),
      MEMORY_URL: memoryUrl,
      AGENT_CHAT_URL: chatUrl,
      MCP_HTTP_MAX_BYTES: "65536",
      ...options.gatewayEnv,
    };
    // Two instances of one configuration, as behind a load balancer.
    const gateway: GatewayService = await startGatewayService({ logger, env: gatewayEnv });
    cleanups.push(() => gateway.stop());
    const secondGateway: GatewayService = await startGatewayService({ logger, env: gatewayEnv });
    cleanups.push(() => secondGateway.stop());

    const registered = await fetch(`${broker.urls.rest}/providers`, {
      method: "POST",
      headers: { "x-api-key": brokerKey, "content-type": "application/json" },
      body: JSON.stringify({
        name: "e2e-api",
        auth_type: "api_key",
        api_base_url: api.url,
        params: { credential_header: "authorization", credential_header_prefix: "Bearer " },
      }),
    });
    if (!registered.ok)
      throw new Error(`provider: ${registered.status} ${await registered.text()}`);
    const provider = (await registered.json()) as { id: string };
    const sdk = createGatewayClient({ baseUrl: gateway.urls.rest, apiKey: keys.alice });

    return {
      gatewayUrl: gateway.urls.rest,
      gatewayEnv,
      memoryUrl,
      secondGatewayUrl: secondGateway.urls.rest,
      broker,
      brokerKey,
      keys,
      providerKey,
      api,
      elsewhere,
      bus,
      kernelCalls,
      sdk,
      async connect(workspaceId) {
        const connection = await sdk.captureCredential({
          provider_id: provider.id,
          workspace_id: workspaceId,
          api_key: providerKey,
        });
        return connection.id;
      },
      async markAttention(connectionId) {
        await pg.sql.query("UPDATE broker_connections SET status = 'attention' WHERE id = $1", [
          connectionId,
        ]);
      },
      logs,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
