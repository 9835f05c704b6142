import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { gatewayV1 } from "@atrium/api";
import { createLogger, errorInfoOf } from "@atrium/kit";
import { eventually } from "@atrium/kit/testing";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type GatewayService, startGatewayService } from "../index.js";
import { brokerScript } from "../testing/broker-script.js";
import { type ScriptedBroker, startScriptedBroker } from "../testing/scripted-broker.js";

const logger = createLogger({ name: "gateway-test", level: "silent" });

function gatewayEnv(
  broker: ScriptedBroker,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    GATEWAY_HOST: "127.0.0.1",
    GATEWAY_REST_PORT: "0",
    GATEWAY_GRPC_PORT: "0",
    BROKER_URL: broker.restUrl,
    BROKER_GRPC_URL: broker.grpcUrl,
    BROKER_API_KEY: "broker-key",
    ...extra,
  };
}

async function call(
  gateway: GatewayService,
  method: string,
  path: string,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${gateway.urls.rest}${path}`, {
    method,
    headers,
    redirect: "manual",
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : undefined,
  };
}

describe("gateway service", () => {
  let broker: ScriptedBroker;
  before(async () => {
    broker = await startScriptedBroker(brokerScript());
  });
  after(() => broker.stop());

  describe("open gateway (inbound keys off)", () => {
    let gateway: GatewayService;
    before(async () => {
      gateway = await startGatewayService({ env: gatewayEnv(broker), logger });
    });
    after(() => gateway.stop());

    it("returns the token with the provider's injection strategy", async () => {
      const plain = await call(gateway, "GET", "/v1/token/c-1");
      assert.equal(plain.status, 200);
      assert.equal(plain.body.access_token, "access-c-1");
      assert.equal(plain.body.strategy.type, "oauth2");
      const aws = await call(gateway, "GET", "/v1/token/sigv4");
      assert.deepEqual(
        {
          type: aws.body.strategy.type,
          region: aws.body.strategy.region,
          service: aws.body.strategy.service,
        },
        { type: "aws_sigv4", region: "eu-west-1", service: "execute-api" },
      );
      // One broker call per token: the strategy came with it, nothing was looked up besides.
      const metrics = await (await fetch(`${gateway.urls.rest}/metrics`)).text();
      const brokerCalls = metrics
        .split("\n")
        .filter((l) => l.startsWith("atrium_gateway_broker_calls_total{"))
        .map((l) => /method="(\w+)"/.exec(l)?.[1]);
      assert.deepEqual([...new Set(brokerCalls)], ["GetConnectionToken"]);
    });

    it("passes the broker's error bodies through unchanged", async () => {
      const cases: [string, string, number, unknown][] = [
        ["GET", "/v1/token/attention", 409, { error: "attention_required" }],
        ["POST", "/v1/refresh/attention", 409, { error: "attention_required" }],
        ["GET", "/v1/token/revoked", 410, { code: "connection_revoked" }],
        ["POST", "/v1/refresh/revoked", 410, { code: "connection_revoked" }],
        ["GET", "/v1/connections/revoked", 410, { code: "connection_revoked" }],
        // Over gRPC the broker sends a message, not this body; the gateway rebuilds it.
        [
          "GET",
          "/v1/token/failed",
          400,
          { code: "connection_not_active", message: "connection is failed" },
        ],
      ];
      for (const [method, path, status, body] of cases) {
        const answer = await call(gateway, method, path);
        assert.equal(answer.status, status, path);
        assert.deepEqual(answer.body, body, path);
      }
      const missing = await call(gateway, "GET", "/v1/token/missing");
      assert.equal(missing.status, 404);
    });

    it("revokes with the broker's semantics and lists connections", async () => {
      const revoked = await call(
        gateway,
        "DELETE",
        "/v1/connections/c-9?workspace_id=ws-1&reason=offboarding",
      );
      assert.equal(revoked.status, 200);
      assert.equal(revoked.body.token_deleted, true);
      assert.equal(revoked.body.reason, "offboarding");
      const listed = await call(gateway, "GET", "/v1/connections?workspace_id=ws-7");
      assert.equal(listed.body.connections[0].workspace_id, "ws-7");
    });

    it("registers, lists, reads and disables agents through the broker", async () => {
      const send = (method: string, path: string, body: unknown) =>
        fetch(`${gateway.urls.rest}${path}`, {
          method,
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const created = await send("POST", "/v1/agents", {
        workspace_id: "ws-3",
        name: "planner",
        description: "",
        metadata: { team: "ops" },
      });
      assert.equal(created.status, 200);
      const { created_at, ...rest } = (await created.json()) as Record<string, unknown>;
      assert.ok(created_at);
      assert.deepEqual(rest, {
        id: "agent-1",
        workspace_id: "ws-3",
        name: "planner",
        description: "",
        metadata: { team: "ops" },
      });
      const invalid = await send("POST", "/v1/agents", { workspace_id: "ws-3" });
      assert.equal(invalid.status, 400);
      assert.match(((await invalid.json()) as { message: string }).message, /name is required/);
      const listed = await call(gateway, "GET", "/v1/agents?workspace_id=ws-3");
      assert.equal(listed.body.agents[0].workspace_id, "ws-3");
      assert.equal((await call(gateway, "GET", "/v1/agents/a-2")).body.name, "planner");
      assert.equal((await call(gateway, "GET", "/v1/agents/missing")).status, 404);
      const disabled = await call(gateway, "DELETE", "/v1/agents/a-2");
      assert.equal(disabled.status, 200);
      assert.ok(disabled.body.disabled_at);
      const refused = await send("POST", "/v1/agents/disabled/sessions", { connection_id: "c-1" });
      assert.equal(refused.status, 412);
      assert.match(((await refused.json()) as { message: string }).message, /agent .* disabled/);
    });

    it("redirects the browser from /auth/callback to the return URL", async () => {
      const answer = await call(gateway, "GET", "/auth/callback?code=abc&state=s");
      assert.equal(answer.status, 303);
      const location = new URL(answer.headers.get("location") ?? "");
      assert.equal(location.origin + location.pathname, "https://app.example.com/done");
      assert.equal(location.searchParams.get("connection_id"), "conn-abc");
      assert.equal(location.searchParams.get("x"), "1");
    });

    it("allows any http(s) origin by default (the spec's behaviour)", async () => {
      const answer = await call(gateway, "OPTIONS", "/v1/token/c-1", {
        origin: "https://agent.example.org",
        "access-control-request-method": "GET",
      });
      assert.equal(answer.status, 204);
      assert.equal(answer.headers.get("access-control-allow-origin"), "https://agent.example.org");
      assert.match(answer.headers.get("access-control-allow-headers") ?? "", /x-api-key/);
    });

    it("counts broker calls by the transport that answered", async () => {
      const metrics = await (await fetch(`${gateway.urls.rest}/metrics`)).text();
      const line = metrics
        .split("\n")
        .find(
          (l) =>
            l.startsWith("atrium_gateway_broker_calls_total{") &&
            l.includes('method="GetConnectionToken"'),
        );
      assert.match(line ?? "", /transport="grpc".* [1-9]\d*$/);
    });

    it("serves gRPC from the same contract", async () => {
      const client = createClient(
        gatewayV1.GatewayService,
        createGrpcTransport({ baseUrl: gateway.urls.grpc ?? "" }),
      );
      const token = await client.getToken({ connectionId: "c-2" });
      assert.equal(token.accessToken, "access-c-2");
      await assert.rejects(client.getToken({ connectionId: "revoked" }), (error: unknown) => {
        const received = ConnectError.from(error);
        assert.equal(received.code, Code.FailedPrecondition);
        // The broker's fixed error reaches gRPC callers with its reason as data, passed through.
        assert.deepEqual(errorInfoOf(received), {
          reason: "connection_revoked",
          params: { connection_id: "revoked" },
        });
        return true;
      });
    });
  });

  describe("inbound API keys", () => {
    let gateway: GatewayService;
    let dir: string;
    let keyFile: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), "gateway-keys-"));
      keyFile = join(dir, "keys");
      await writeFile(keyFile, "# rotated by ops\nfile-key-1\n");
      gateway = await startGatewayService({
        env: gatewayEnv(broker, {
          GATEWAY_REQUIRE_API_KEY: "true",
          GATEWAY_API_KEYS: "env-key-1,env-key-2",
          GATEWAY_API_KEYS_FILE: keyFile,
          GATEWAY_API_KEY_RELOAD_INTERVAL: "100ms",
        }),
        logger,
      });
    });
    after(async () => {
      await gateway.stop();
      await rm(dir, { recursive: true });
    });

    it("answers 401 without a key, 403 with a wrong one, 200 with any configured one", async () => {
      assert.equal((await call(gateway, "GET", "/v1/token/c-1")).status, 401);
      assert.equal(
        (await call(gateway, "GET", "/v1/token/c-1", { "x-api-key": "nope" })).status,
        403,
      );
      assert.equal(
        (await call(gateway, "GET", "/v1/token/c-1", { "x-api-key": "env-key-2" })).status,
        200,
      );
      assert.equal(
        (await call(gateway, "GET", "/v1/token/c-1", { "x-api-key": "file-key-1" })).status,
        200,
      );
    });

    it("refuses a keyless request before reading its body", async () => {
      const answer = await fetch(`${gateway.urls.rest}/v1/refresh/c-1`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{not json",
      });
      assert.equal(answer.status, 401);
      await answer.body?.cancel();
    });

    it("leaves /health, /auth/callback and the capture routes open", async () => {
      assert.equal((await call(gateway, "GET", "/health")).status, 200);
      assert.equal((await call(gateway, "GET", "/v1/capture-schema?provider_id=p1")).status, 200);
      assert.equal((await call(gateway, "GET", "/auth/callback?code=x&state=y")).status, 303);
    });

    it("answers a preflight without a key and lets the page read a refusal (CORS)", async () => {
      const origin = "https://agent.example.org";
      const preflight = await call(gateway, "OPTIONS", "/v1/token/c-1", {
        origin,
        "access-control-request-method": "GET",
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get("access-control-allow-origin"), origin);
      const refused = await call(gateway, "GET", "/v1/token/c-1", { origin });
      assert.equal(refused.status, 401);
      assert.equal(refused.headers.get("access-control-allow-origin"), origin);
    });

    it("re-reads the key files", async () => {
      await writeFile(keyFile, "file-key-2\n");
      await eventually("the rotated key is accepted", async () => {
        return (
          (await call(gateway, "GET", "/v1/token/c-1", { "x-api-key": "file-key-2" })).status ===
          200
        );
      });
      assert.equal(
        (await call(gateway, "GET", "/v1/token/c-1", { "x-api-key": "file-key-1" })).status,
        403,
      );
    });

    it("applies the same check to gRPC metadata x-api-key", async () => {
      const transport = (key?: string) =>
        createGrpcTransport({
          baseUrl: gateway.urls.grpc ?? "",
          interceptors: key
            ? [
                (next) => (request) => {
                  request.header.set("x-api-key", key);
                  return next(request);
                },
              ]
            : [],
        });
      const codeOf = async (key?: string) => {
        try {
          await createClient(gatewayV1.GatewayService, transport(key)).getToken({
            connectionId: "c-1",
          });
          return Code[0];
        } catch (error) {
          return Code[ConnectError.from(error).code];
        }
      };
      assert.equal(await codeOf(), "Unauthenticated");
      assert.equal(await codeOf("nope"), "PermissionDenied");
      assert.equal(await codeOf("env-key-1"), Code[0]);
      const schema = await createClient(gatewayV1.GatewayService, transport()).getCaptureSchema({
        providerId: "p1",
      });
      assert.equal(schema.providerId, "p1");
    });
  });

  describe("guardrails", () => {
    it("refuses to start with inbound keys required and none configured", async () => {
      await assert.rejects(
        startGatewayService({
          env: gatewayEnv(broker, { GATEWAY_REQUIRE_API_KEY: "true" }),
          logger,
        }),
        /GATEWAY_REQUIRE_API_KEY=true but no key/,
      );
    });

    it("lets an allowed address through to gRPC", async () => {
      const gateway = await startGatewayService({
        env: gatewayEnv(broker, { ALLOWED_CIDRS: "127.0.0.0/8,::1" }),
        logger,
      });
      try {
        const grpc = createClient(
          gatewayV1.GatewayService,
          createGrpcTransport({ baseUrl: gateway.urls.grpc ?? "" }),
        );
        assert.equal((await grpc.getToken({ connectionId: "c-5" })).accessToken, "access-c-5");
      } finally {
        await gateway.stop();
      }
    });

    it("refuses to start without BROKER_API_KEY", async () => {
      const env = gatewayEnv(broker);
      delete env.BROKER_API_KEY;
      await assert.rejects(startGatewayService({ env, logger }), /BROKER_API_KEY/);
    });

    it("applies ALLOWED_CIDRS to the caller behind trusted proxies and tells the broker who called", async () => {
      const gateway = await startGatewayService({
        env: gatewayEnv(broker, {
          ALLOWED_CIDRS: "10.1.0.0/16",
          TRUSTED_PROXIES: "127.0.0.1/32",
          CORS_ALLOWED_ORIGINS: "https://console.example.com",
        }),
        logger,
      });
      try {
        const direct = await call(gateway, "GET", "/v1/token/c-1");
        assert.equal(direct.status, 403);
        assert.equal(direct.body.code, "ip_not_allowed");
        assert.equal((await call(gateway, "GET", "/health")).status, 200);
        const proxied = await call(gateway, "GET", "/v1/token/c-1", {
          "x-forwarded-for": "6.6.6.6, 10.1.2.3",
          origin: "https://elsewhere.example.com",
        });
        assert.equal(proxied.status, 200);
        assert.equal(proxied.headers.get("access-control-allow-origin"), null);
        const seen = broker.calls.filter((c) => c.method === "GetConnectionToken").at(-1);
        assert.equal(seen?.headers.get("x-forwarded-for"), "10.1.2.3");
        const allowed = await call(gateway, "GET", "/v1/token/c-1", {
          "x-forwarded-for": "10.1.2.3",
          origin: "https://console.example.com",
        });
        assert.equal(
          allowed.headers.get("access-control-allow-origin"),
          "https://console.example.com",
        );
      } finally {
        await gateway.stop();
      }
    });

    it("applies ALLOWED_CIDRS and trusted X-Forwarded-For on gRPC too", async () => {
      const gateway = await startGatewayService({
        env: gatewayEnv(broker, { ALLOWED_CIDRS: "10.1.0.0/16", TRUSTED_PROXIES: "127.0.0.1/32" }),
        logger,
      });
      const grpc = (forwardedFor?: string) =>
        createClient(
          gatewayV1.GatewayService,
          createGrpcTransport({
            baseUrl: gateway.urls.grpc ?? "",
            interceptors: forwardedFor
              ? [
                  (next) => (request) => {
                    request.header.set("x-forwarded-for", forwardedFor);
                    return next(request);
                  },
                ]
              : [],
          }),
        );
      try {
        await assert.rejects(grpc().getToken({ connectionId: "c-1" }), (error: unknown) => {
          assert.equal(ConnectError.from(error).code, Code.PermissionDenied);
          return true;
        });
        const token = await grpc("6.6.6.6, 10.1.2.3").getToken({ connectionId: "c-3" });
        assert.equal(token.accessToken, "access-c-3");
        const seen = broker.calls.filter((c) => c.method === "GetConnectionToken").at(-1);
        assert.equal(seen?.transport, "grpc");
        assert.equal(seen?.headers.get("x-forwarded-for"), "10.1.2.3");
      } finally {
        await gateway.stop();
      }
    });
  });
});
