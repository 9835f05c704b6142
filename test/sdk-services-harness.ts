// The real services the SDK suites in every language run against, started in one process:
// oidc-provider → broker (embedded PGlite) → gateway, the memory service (embedded stores) and the
// chat router with a scripted kernel behind a cuttable proxy, plus a control API (consent as the
// user's browser, token expiry, stream cuts, an echo of the last request an SDK sent, and a
// webhook receiver acknowledging every delivery).
// test/sdk-services.ts runs it for the Python and Go suites.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBrokerService } from "@atrium/broker";
import { startTestOidcProvider, testBrokerEnv } from "@atrium/broker/testing";
import { type ChatKernel, createChatRouter, createTraceBus } from "@atrium/chat";
import { startGatewayService } from "@atrium/gateway";
import { createLogger, createMemoryCache, createPgliteSql } from "@atrium/kit";
import { startMemoryService } from "@atrium/memory";
import Fastify from "fastify";
import { startProtectedResource } from "./gateway-e2e-harness.js";
import { freePort, startTcpProxy } from "./gateway-tcp-proxy.js";

/** Static-credential providers, one per injection strategy, all validated against the echo. */
const staticProviders = {
  api_key: {
    auth_type: "api_key",
    params: { credential_header: "X-Test-Key", credential_header_prefix: "Key " },
  },
  query_param: {
    auth_type: "api_key",
    params: { credential_strategy: "query_param", credential_query_param: "key" },
  },
  hmac_payload: {
    auth_type: "api_key",
    params: { credential_strategy: "hmac_payload", credential_header_prefix: "sha256=" },
  },
  basic_auth: { auth_type: "basic_auth", params: {} },
  aws_sigv4: {
    auth_type: "basic_auth",
    params: {
      credential_strategy: "aws_sigv4",
      aws_region: "us-east-1",
      aws_service: "execute-api",
    },
  },
} as const;

export interface SdkServiceUrls {
  gateway: string;
  gateway_api_key: string;
  memory: string;
  chat: string;
  chat_proxy: string;
  control: string;
  echo: string;
  /** A loopback webhook receiver (the broker allows http on loopback here); answers 204. */
  webhook: string;
  resource: string;
  /** Provider ids by credential strategy (oauth2 and the five static ones). */
  providers: Record<string, string>;
}

export interface SdkServices {
  urls: SdkServiceUrls;
  stop(): Promise<void>;
}

/** Starts everything on spare loopback ports; `stop()` tears it down and removes its data. */
export async function startSdkServices(): Promise<SdkServices> {
  const logger = createLogger({ name: "sdk-services", level: "silent" });
  const brokerKey = `broker-${randomBytes(8).toString("hex")}`;
  const agentKey = `agent-${randomBytes(8).toString("hex")}`;
  const dataDir = await mkdtemp(join(tmpdir(), "sdk-services-"));
  const stops: (() => Promise<unknown> | unknown)[] = [];
  const stop = async () => {
    for (const step of stops.splice(0)) {
      try {
        await step();
      } catch {
        // Best effort: the rest still has to stop.
      }
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  /** Requests to /echo/* are answered 200 and remembered, so a test can see what arrived. */
  let lastEcho: unknown;
  const gates = new Map<string, () => void>();
  const gateFor = (workflowId: string) =>
    new Promise<void>((resolve) => {
      gates.set(workflowId, resolve);
    });

  try {
    const gatewayPort = await freePort();
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const idp = await startTestOidcProvider({ redirectUri: `${gatewayUrl}/auth/callback` });
    stops.push(() => idp.close());
    const resource = await startProtectedResource(idp.userinfoEndpoint);
    stops.push(() => resource.close());

    const sql = await createPgliteSql({ dataDir: join(dataDir, "broker") });
    stops.push(() => sql.close());
    const broker = await startBrokerService({
      sql,
      logger,
      env: testBrokerEnv({
        API_KEYS: brokerKey,
        ALLOWED_RETURN_DOMAINS: "localhost",
        WEBHOOK_ALLOW_HTTP_LOOPBACK: "true",
      }),
    });
    stops.unshift(() => broker.stop());
    const gateway = await startGatewayService({
      logger,
      env: {
        GATEWAY_HOST: "127.0.0.1",
        GATEWAY_REST_PORT: String(gatewayPort),
        GATEWAY_GRPC_PORT: "0",
        GATEWAY_PUBLIC_URL: gatewayUrl,
        BROKER_URL: broker.urls.rest,
        BROKER_GRPC_URL: broker.urls.grpc ?? "",
        BROKER_API_KEY: brokerKey,
        GATEWAY_REQUIRE_API_KEY: "true",
        GATEWAY_API_KEYS: agentKey,
        ALLOWED_RETURN_DOMAINS: "localhost",
      },
    });
    stops.unshift(() => gateway.stop());

    const memory = await startMemoryService({
      env: {
        MEMORY_HOST: "127.0.0.1",
        MEMORY_REST_PORT: "0",
        MEMORY_GRPC_PORT: "0",
        ATRIUM_DATA_DIR: join(dataDir, "memory"),
        MEMORY_PROMOTER_INTERVAL: "0s",
      },
      logger,
    });
    stops.unshift(() => memory.stop());

    const bus = createTraceBus({ cache: createMemoryCache(), tracesDir: join(dataDir, "traces") });
    stops.unshift(() => bus.close());
    // Three events, then (for the message "hold") a pause until the test cuts the stream.
    const kernel: ChatKernel = {
      traceBus: bus,
      async execute(input) {
        const workflowId = String(input.context.workflow_id);
        const gate = input.task === "hold" ? gateFor(workflowId) : undefined;
        for (let i = 1; i <= 3; i++) await input.trace.emit("thinking", { thought: `before ${i}` });
        await gate;
        for (let i = 1; i <= 3; i++) await input.trace.emit("thinking", { thought: `after ${i}` });
        return { status: "success", summary: `echo: ${input.task}`, metadata: {} };
      },
    };
    const chat = Fastify();
    await chat.register(createChatRouter(kernel), { prefix: "/api/v1" });
    await chat.listen({ host: "127.0.0.1", port: 0 });
    stops.unshift(() => chat.close());
    const chatUrl = `http://127.0.0.1:${(chat.server.address() as AddressInfo).port}`;
    const chatProxy = await startTcpProxy(new URL(chatUrl));
    stops.unshift(() => chatProxy.close());

    const control = createServer((req, res) => {
      handleControl(req, res).catch((error: unknown) => reply(res, 500, { error: String(error) }));
    });
    await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));
    stops.unshift(
      () =>
        new Promise<void>((resolve) => {
          control.closeAllConnections();
          control.close(() => resolve());
        }),
    );
    const controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}`;

    const registerProvider = async (name: string, body: Record<string, unknown>) => {
      const response = await fetch(`${broker.urls.rest}/providers`, {
        method: "POST",
        headers: { "x-api-key": brokerKey, "content-type": "application/json" },
        body: JSON.stringify({ name, ...body }),
      });
      if (!response.ok) throw new Error(`provider ${name}: ${await response.text()}`);
      return ((await response.json()) as { id: string }).id;
    };
    const providers: Record<string, string> = {
      oauth2: await registerProvider("sdk-idp", {
        auth_type: "oauth2",
        client_id: idp.clientId,
        client_secret: idp.clientSecret,
        issuer: idp.issuer,
        scopes: ["openid", "offline_access"],
      }),
    };
    for (const [strategy, provider] of Object.entries(staticProviders)) {
      providers[strategy] = await registerProvider(`sdk-${strategy}`, {
        ...provider,
        api_base_url: `${controlUrl}/echo/validate`,
      });
    }

    async function handleControl(req: IncomingMessage, res: ServerResponse) {
      const body = await readBody(req);
      const url = new URL(req.url ?? "/", controlUrl);
      if (url.pathname.startsWith("/echo/")) {
        lastEcho = {
          method: req.method,
          path: url.pathname,
          query: Object.fromEntries(url.searchParams),
          headers: req.headers,
          body,
        };
        return reply(res, 200, { echoed: true });
      }
      if (url.pathname === "/webhook") {
        res.writeHead(204).end();
        return;
      }
      const input = body === "" ? {} : JSON.parse(body);
      switch (`${req.method} ${url.pathname}`) {
        case "GET /echo-last":
          return reply(res, 200, lastEcho ?? {});
        // Plays the user's browser: consent at the provider, then the gateway's callback.
        case "POST /authorize": {
          const callback = new URL(idp.redirectUri);
          callback.search = (await idp.authorize(input.authorization_url)).toString();
          const landed = await fetch(callback, { redirect: "manual" });
          const location = new URL(landed.headers.get("location") ?? "", gatewayUrl);
          return reply(res, 200, {
            connection_id: location.searchParams.get("connection_id"),
            status: location.searchParams.get("status"),
          });
        }
        // The stored token expires, so the next retrieval refreshes it at the provider.
        case "POST /expire":
          await sql.query(
            "UPDATE broker_connections SET expires_at = now() - interval '1 minute' WHERE id = $1",
            [input.connection_id],
          );
          return reply(res, 200, {});
        // A network blip on the chat proxy; a held workflow then finishes its step.
        case "POST /chat/cut":
          chatProxy.cut();
          gates.get(input.workflow_id)?.();
          return reply(res, 200, { accepted: chatProxy.accepted() });
        case "GET /chat/accepted":
          return reply(res, 200, { accepted: chatProxy.accepted() });
        default:
          return reply(res, 404, { error: "no such control route" });
      }
    }

    return {
      urls: {
        gateway: gateway.urls.rest,
        gateway_api_key: agentKey,
        memory: memory.urls.rest,
        chat: `${chatUrl}/api/v1`,
        chat_proxy: `${chatProxy.url}/api/v1`,
        control: controlUrl,
        echo: `${controlUrl}/echo`,
        webhook: `${controlUrl}/webhook`,
        resource: resource.url,
        providers,
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => {
      text += chunk;
    });
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

function reply(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
