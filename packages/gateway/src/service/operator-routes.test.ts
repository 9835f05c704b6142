import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { createLogger } from "@atrium/kit";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type GatewayService, startGatewayService } from "../index.js";
import { brokerScript } from "../testing/broker-script.js";
import { type ScriptedBroker, startScriptedBroker } from "../testing/scripted-broker.js";

interface Seen {
  method: string;
  url: string;
  key: string | undefined;
  lastEventId: string | undefined;
  body: string;
}

/** A loopback HTTP service that records requests and answers with `respond`. */
async function upstream(
  respond: (req: IncomingMessage, res: ServerResponse, body: string) => void,
) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        key: req.headers["x-api-key"] as string | undefined,
        lastEventId: req.headers["last-event-id"] as string | undefined,
        body,
      });
      respond(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("gateway /v1/operator (the console's read-only views)", () => {
  let broker: ScriptedBroker;
  let gateway: GatewayService;
  let memory: Awaited<ReturnType<typeof upstream>>;
  let chat: Awaited<ReturnType<typeof upstream>>;
  let auditRequest: { eventType: string; limit?: number; offset: number } | undefined;

  before(async () => {
    broker = await startScriptedBroker(
      brokerScript({
        async listProviders() {
          return {
            providers: [
              {
                id: "p1",
                name: "github",
                authType: "oauth2",
                clientSecretFingerprint: "ab12cd34ef56ab12",
              },
            ],
          };
        },
        async listAuditEvents(request) {
          auditRequest = request;
          return {
            events: [
              {
                id: "e1",
                eventType: "token.retrieved",
                resourceId: "c1",
                createdAt: timestampFromDate(new Date("2026-11-25T10:00:00Z")),
              },
            ],
            total: 1,
            limit: request.limit ?? 50,
            offset: request.offset,
          };
        },
      }),
    );
    memory = await upstream((req, res, body) => {
      res.writeHead(req.url?.startsWith("/api/v1/operator/users") ? 200 : 400, {
        "content-type": "application/json",
      });
      res.end(
        req.url?.startsWith("/api/v1/operator/users")
          ? JSON.stringify({ users: [{ user_id: "u1" }] })
          : JSON.stringify({ message: `echo ${body}` }),
      );
    });
    chat = await upstream((req, res) => {
      if (req.url?.startsWith("/api/v1/chat/stream/")) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end('id: 8\nevent: thinking\ndata: {"thought":"<b>hi</b>"}\n\n');
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ path: req.url }));
    });
    gateway = await startGatewayService({
      env: {
        GATEWAY_HOST: "127.0.0.1",
        GATEWAY_REST_PORT: "0",
        GATEWAY_GRPC_PORT: "0",
        BROKER_URL: broker.restUrl,
        BROKER_GRPC_URL: broker.grpcUrl,
        BROKER_API_KEY: "broker-key",
        GATEWAY_REQUIRE_API_KEY: "true",
        GATEWAY_API_KEYS: "operator-key",
        MEMORY_URL: memory.url,
        MEMORY_API_KEY: "memory-key",
        AGENT_CHAT_URL: `${chat.url}/api/v1`,
        AGENT_API_KEY: "agent-key",
      },
      logger: createLogger({ name: "operator-test", level: "silent" }),
    });
  });
  after(async () => {
    await gateway.stop();
    await broker.stop();
    await memory.close();
    await chat.close();
  });

  const get = (path: string, headers: Record<string, string> = { "x-api-key": "operator-key" }) =>
    fetch(`${gateway.urls.rest}${path}`, { headers });

  it("needs the gateway key like every /v1 route", async () => {
    assert.equal((await get("/v1/operator/providers", {})).status, 401);
    assert.equal((await get("/v1/operator/providers", { "x-api-key": "nope" })).status, 403);
    assert.equal(memory.seen.length, 0);
  });

  it("lists providers with their fingerprint and reads the audit log with its filters", async () => {
    const providers = await (await get("/v1/operator/providers")).json();
    assert.deepEqual(providers, {
      providers: [
        {
          id: "p1",
          name: "github",
          auth_type: "oauth2",
          client_secret_fingerprint: "ab12cd34ef56ab12",
        },
      ],
    });
    const audit = await get("/v1/operator/audit?event_type=token.retrieved&limit=20&offset=40");
    assert.equal(audit.status, 200);
    const body = (await audit.json()) as { events: { event_type: string }[]; total: number };
    assert.equal(body.events[0].event_type, "token.retrieved");
    assert.equal(auditRequest?.eventType, "token.retrieved");
    assert.equal(auditRequest?.limit, 20);
    assert.equal(auditRequest?.offset, 40);
    const bad = await get("/v1/operator/audit?offset=-1");
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { message: string }).message, /offset/);
  });

  it("forwards memory views and search with the memory key, never the operator's", async () => {
    const users = await get("/v1/operator/memory/users?tenant_id=acme");
    assert.deepEqual(await users.json(), { users: [{ user_id: "u1" }] });
    const search = await fetch(`${gateway.urls.rest}/v1/operator/memory/search`, {
      method: "POST",
      headers: { "x-api-key": "operator-key", "content-type": "application/json" },
      body: JSON.stringify({ tenant_id: "acme", user_id: "u1", query: "" }),
    });
    assert.equal(search.status, 400, "the memory service's answer is passed through");
    assert.deepEqual(
      memory.seen.map((s) => [s.method, s.url, s.key]),
      [
        ["GET", "/api/v1/operator/users?tenant_id=acme", "memory-key"],
        ["POST", "/api/v1/operator/search", "memory-key"],
      ],
    );
    assert.equal(JSON.parse(memory.seen[1].body).user_id, "u1");
    assert.equal((await get("/v1/operator/memory/..%2Fsessions")).status, 404);
  });

  it("lists workflows, reads a step and relays a trace stream with Last-Event-ID", async () => {
    assert.deepEqual(await (await get("/v1/operator/workflows?limit=5")).json(), {
      path: "/api/v1/chat/workflows?limit=5",
    });
    assert.deepEqual(await (await get("/v1/operator/workflows/wf_1/steps/step_2")).json(), {
      path: "/api/v1/chat/history/wf_1/step_2",
    });
    assert.equal((await get("/v1/operator/workflows/wf.1/steps/x")).status, 400);
    const stream = await get("/v1/operator/workflows/wf_1/stream", {
      "x-api-key": "operator-key",
      "last-event-id": "7",
    });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get("content-type") ?? "", /text\/event-stream/);
    assert.match(await stream.text(), /id: 8\nevent: thinking/);
    const relayed = chat.seen.at(-1);
    assert.equal(relayed?.url, "/api/v1/chat/stream/wf_1");
    assert.equal(relayed?.lastEventId, "7");
    assert.equal(relayed?.key, "agent-key");
  });

  it("lists the steps waiting for approval, decides one in the background, reads its run", async () => {
    assert.deepEqual(await (await get("/v1/operator/approvals?limit=5&cursor=abc")).json(), {
      path: "/api/v1/chat/runs?status=yielded&pending=approval&limit=5&cursor=abc",
    });
    assert.deepEqual(await (await get("/v1/operator/runs/wf_1/step_2")).json(), {
      path: "/api/v1/chat/runs/wf_1/step_2",
    });
    const decide = (body: unknown, path = "/v1/operator/approvals/wf_1/step_2") =>
      fetch(`${gateway.urls.rest}${path}`, {
        method: "POST",
        headers: { "x-api-key": "operator-key", "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const forwarded = chat.seen.length;
    assert.equal((await decide({ approval: "approve", pause: 1 })).status, 200);
    const resume = chat.seen.at(-1);
    assert.deepEqual(
      [resume?.method, resume?.url, resume?.key, JSON.parse(resume?.body ?? "{}")],
      [
        "POST",
        "/api/v1/chat/runs/wf_1/step_2/resume",
        "agent-key",
        { approval: "approve", pause: 1, background: true },
      ],
    );
    for (const [body, field] of [
      [{ approval: "yes", pause: 1 }, "approval"],
      [{ approval: "deny" }, "pause"],
      [{ approval: "deny", pause: -1 }, "pause"],
    ] as const) {
      const refused = await decide(body);
      assert.equal(refused.status, 400);
      assert.match(
        ((await refused.json()) as { message: string }).message,
        new RegExp(`${field} must`),
      );
    }
    assert.equal(
      (await decide({ approval: "deny", pause: 1 }, "/v1/operator/approvals/w.1/s")).status,
      400,
    );
    assert.equal(chat.seen.length, forwarded + 1, "a refused decision reaches no agent host");
  });

  it("says which service could not be reached", async () => {
    await memory.close();
    const answer = await get("/v1/operator/memory/users?tenant_id=acme");
    assert.equal(answer.status, 503);
    assert.match(((await answer.json()) as { message: string }).message, /memory service/);
  });
});
