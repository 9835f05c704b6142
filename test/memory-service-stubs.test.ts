import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { memoryV1 } from "@atrium/api";
import {
  type Authenticator,
  type Cache,
  createAuthenticator,
  createLogger,
  createServiceHost,
  type ServiceHost,
  type Sql,
} from "@atrium/kit";
import { createHashEmbedder, createMemoryService, type MemoryServiceDeps } from "@atrium/memory";
import { SignJWT } from "jose";
import {
  grpcTransport,
  httpStatus,
  ok,
  restTransport,
  type Transport,
} from "./memory-service-harness.js";

/**
 * Contract items that need a broken or partial deployment: a failing cache, no promoter, no
 * blob store, JWT identity. The real handlers and the real service host run over both
 * transports; only the stores are stand-ins that record what was written.
 */
const jwtSecret = "memory-test-jwt-secret-with-32-bytes!!";
const sessionId = "11111111-1111-4111-8111-111111111111";
const created: { tenantId: string; userId: string; agentId: string }[] = [];
const written: string[] = [];

const session = {
  id: sessionId,
  tenantId: "t-owner",
  userId: "u-owner",
  agentId: "",
  metadata: {},
  createdAt: new Date(),
  updatedAt: new Date(),
};

const unused = (what: string) => () => {
  written.push(what);
  throw new Error(`${what} must not be called`);
};

const deps = {
  sql: { ping: async () => {}, query: async () => ({ rows: [], rowCount: 0 }) } as unknown as Sql,
  cache: {
    ping: async () => {
      throw new Error("connect ECONNREFUSED 127.0.0.1:6390");
    },
  } as unknown as Cache,
  chainChecks: { request: unused("chainChecks.request") },
  embedder: createHashEmbedder(),
  sessions: {
    create: async (scope: { tenantId: string; userId: string; agentId: string }) => {
      created.push(scope);
      return { ...session, ...scope, id: sessionId };
    },
    get: async (id: string) => (id === sessionId ? session : undefined),
  },
  events: { insert: unused("events.insert") },
  window: { append: unused("window.append"), read: async () => [] },
  recentPages: { read: async () => [], invalidate: unused("recentPages.invalidate") },
  vectorSearch: {
    kind: "exact",
    upsert: unused("vector.upsert"),
    remove: unused("vector.remove"),
    search: async () => [],
  },
  logger: createLogger({ name: "memory", level: "silent" }),
} as unknown as MemoryServiceDeps;

async function sign(claims: Record<string, string>): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(jwtSecret));
}

function expectError(
  result: Awaited<ReturnType<Transport["call"]>>,
  code: string,
  message?: RegExp,
) {
  assert.equal(result.ok, false);
  if (result.ok) return;
  assert.equal(result.code, code, result.message);
  if (result.status !== undefined) assert.equal(result.status, httpStatus[code]);
  if (message) assert.match(result.message, message);
}

/** The stubbed service on a real host, over both transports. */
async function serve(
  authenticator?: Authenticator,
): Promise<{ host: ServiceHost; transports: Transport[] }> {
  const host = createServiceHost({
    name: "memory",
    logger: createLogger({ name: "memory", level: "silent" }),
    rest: { host: "127.0.0.1", port: 0 },
    grpc: { host: "127.0.0.1", port: 0 },
    services: [{ service: memoryV1.MemoryService, implementation: createMemoryService(deps) }],
    authenticator,
  });
  const urls = await host.start();
  return { host, transports: [restTransport(urls.restUrl), grpcTransport(urls.grpcUrl as string)] };
}

describe("no promoter, no blob store, a failing cache", () => {
  let host: ServiceHost;
  let transports: Transport[];
  before(async () => {
    ({ host, transports } = await serve());
  });
  after(() => host.stop());

  for (const name of ["rest", "grpc"]) {
    const t = () => transports.find((x) => x.name === name) as Transport;

    test(`${name}: HealthCheck is degraded and names the failing store with its error`, async () => {
      const health = await ok(t(), "healthCheck");
      assert.equal(health.status, "degraded");
      assert.equal(health.dependencies.database, "healthy");
      assert.match(health.dependencies.cache, /^unhealthy: .*ECONNREFUSED/);
    });

    test(`${name}: TriggerGraphAnalytics is Internal without a promoter`, async () => {
      expectError(await t().call("triggerGraphAnalytics"), "Internal", /promoter/);
    });

    test(`${name}: a payload with no blob store is FailedPrecondition and nothing is written`, async () => {
      const before = written.length;
      expectError(
        await t().call("storeEvent", {
          session_id: sessionId,
          type: "observation",
          payload: Buffer.from("data").toString("base64"),
          mime_type: "text/plain",
        }),
        "FailedPrecondition",
        /blob store/,
      );
      assert.equal(written.length, before);
    });
  }
});

describe("JWT auth on", () => {
  let host: ServiceHost;
  let transports: Transport[];
  before(async () => {
    ({ host, transports } = await serve(createAuthenticator({ jwt: { secret: jwtSecret } })));
  });
  after(() => host.stop());

  for (const name of ["rest", "grpc"]) {
    const t = () => transports.find((x) => x.name === name) as Transport;

    test(`${name}: CreateSession takes tenant, user and agent from the token, not the body`, async () => {
      const token = await sign({ tenant_id: "t-jwt", user_id: "u-jwt", agent_id: "a-jwt" });
      created.length = 0;
      await ok(
        t(),
        "createSession",
        { tenant_id: "t-body", user_id: "u-body", agent_id: "a-body" },
        {
          "x-jwt-token": token,
        },
      );
      assert.deepEqual(created, [{ tenantId: "t-jwt", userId: "u-jwt", agentId: "a-jwt" }]);
      // The body may even leave them out.
      await ok(t(), "createSession", {}, { authorization: `JWT ${token}` });
      assert.equal(created.length, 2);
    });

    test(`${name}: no token is Unauthenticated; another tenant's session does not exist`, async () => {
      expectError(
        await t().call("createSession", { tenant_id: "t", user_id: "u" }),
        "Unauthenticated",
      );
      const stranger = await sign({ tenant_id: "t-other", user_id: "u-owner" });
      expectError(
        await t().call("getContext", { session_id: sessionId }, { "x-jwt-token": stranger }),
        "NotFound",
      );
      const owner = await sign({ tenant_id: "t-owner", user_id: "u-owner" });
      const context = await ok(
        t(),
        "getContext",
        { session_id: sessionId },
        { "x-jwt-token": owner },
      );
      assert.equal(context.ltpm.status, "not_implemented");
    });
  }
});
