import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, type TestContext, test } from "node:test";
import { createLogger, type RunningService } from "@atrium/kit";
import { createTestPostgres, eventually, needsServer } from "@atrium/kit/testing";
import { SignJWT } from "jose";
import { startMemoryService } from "./start-memory-service.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers of any shape, asserted on below
type Json = any;

/** The real service on ephemeral ports with PGlite under a temporary directory, or `env`'s database. */
async function start(t: TestContext, env: Record<string, string> = {}): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), "atrium-operator-"));
  const service: RunningService = await startMemoryService({
    env: {
      MEMORY_HOST: "127.0.0.1",
      MEMORY_REST_PORT: "0",
      MEMORY_GRPC_PORT: "0",
      ATRIUM_DATA_DIR: dataDir,
      MEMORY_PROMOTER_INTERVAL: "0s",
      ...env,
    },
    logger: createLogger({ name: "memory", level: "silent" }),
  });
  t.after(async () => {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return service.urls.rest;
}

async function call(
  base: string,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function ok(base: string, method: "GET" | "POST", path: string, body?: unknown) {
  const answer = await call(base, method, path, body);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

const q = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

async function seed(base: string, tenant: string) {
  const session = async (agent: string) =>
    (
      await ok(base, "POST", "/api/v1/sessions", {
        tenant_id: tenant,
        user_id: "alice",
        agent_id: agent,
      })
    ).session_id as string;
  const work = await session("assistant");
  const kitchen = await session("cook");
  const say = (session_id: string, user_message: string, agent_response?: string) =>
    ok(base, "POST", `/api/v1/sessions/${session_id}/interactions`, {
      user_message,
      ...(agent_response ? { agent_response } : {}),
    });
  await say(
    work,
    "Alice Johnson works at Acme Corp in Berlin with Bob Miller.",
    "Noted: Alice Johnson and Bob Miller work at Acme Corp.",
  );
  // A different topic closes the first chain, which can then be promoted into the graph.
  await say(work, "What is a good recipe for tomato soup tonight?");
  await say(
    kitchen,
    "How long should a sourdough starter ferment before baking bread?",
    "Feed the sourdough starter and bake when it doubles, about six hours.",
  );
  // Another user of the tenant, last heard from long ago.
  const { session_id: old } = await ok(base, "POST", "/api/v1/sessions", {
    tenant_id: tenant,
    user_id: "bob",
  });
  await ok(base, "POST", `/api/v1/sessions/${old}/interactions`, {
    user_message: "Remind me about the dentist.",
    timestamp: "2020-01-02T03:04:05Z",
  });
  return { work, kitchen };
}

function suite(name: string, env: (t: TestContext) => Promise<Record<string, string> | undefined>) {
  describe(`operator routes on ${name}`, () => {
    test("users, a user's scopes, chains with their turns, the graph, an entity and search with ranks", async (t) => {
      const settings = await env(t);
      if (!settings) return;
      const base = await start(t, settings);
      const tenant = `operator-${name}`;
      const { work, kitchen } = await seed(base, tenant);
      const user = q({ tenant_id: tenant, user_id: "alice" });

      let view: Json;
      await eventually("every message is in a chain", async () => {
        view = await ok(base, "GET", `/api/v1/operator/user?${user}`);
        return view.chains.reduce((n: number, c: Json) => n + c.turns.length, 0) === 5;
      });
      await eventually("the graph holds the promoted chain's entities, analysed", async () => {
        await ok(base, "POST", "/api/v1/admin/analytics/trigger", {});
        const graph = await ok(base, "GET", `/api/v1/operator/graph?${user}`);
        return graph.nodes.some((n: Json) => n.name === "Alice Johnson" && n.community !== null);
      });

      const { users } = await ok(base, "GET", `/api/v1/operator/users?${q({ tenant_id: tenant })}`);
      // Most recently active first; a session that named no agent is the agent "".
      assert.deepEqual(
        users.map((u: Json) => ({ ...u, last_event_at: undefined })),
        [
          {
            user_id: "alice",
            agents: ["assistant", "cook"],
            sessions: 2,
            last_event_at: undefined,
          },
          { user_id: "bob", agents: [""], sessions: 1, last_event_at: undefined },
        ],
      );
      assert.ok(Date.parse(users[0].last_event_at) > Date.now() - 3_600_000);
      assert.equal(users[1].last_event_at, "2020-01-02T03:04:05.000Z");

      view = await ok(base, "GET", `/api/v1/operator/user?${user}`);
      assert.deepEqual(
        view.scopes.map((s: Json) => [s.agent_id, s.sessions.map((x: Json) => x.id)]),
        [
          ["assistant", [work]],
          ["cook", [kitchen]],
        ],
      );
      const assistant = view.scopes[0];
      // The STM window, newest first, as GetContext holds it.
      assert.deepEqual(
        assistant.stm.map((e: Json) => [e.role, e.type, e.content]),
        [
          ["user", "message", "What is a good recipe for tomato soup tonight?"],
          ["agent", "message", "Noted: Alice Johnson and Bob Miller work at Acme Corp."],
          ["user", "message", "Alice Johnson works at Acme Corp in Berlin with Bob Miller."],
        ],
      );
      assert.ok(assistant.stm.every((e: Json) => typeof e.timestamp === "string" && e.metadata));

      const acme = view.chains.find((c: Json) => c.turns.some((x: Json) => /Acme/.test(x.content)));
      assert.equal(acme.agent_id, "assistant");
      assert.equal(acme.status, "closed");
      assert.ok(acme.topic.length > 0 && acme.summary.length > 0);
      assert.ok(acme.heat > 0 && acme.heat <= 1);
      // Provenance: the turns are the stored messages the chain was built from, in order.
      const stmIds = new Map(assistant.stm.map((e: Json) => [e.content, e.id]));
      assert.deepEqual(
        acme.turns.map((x: Json) => [x.role, x.id]),
        [
          ["user", stmIds.get("Alice Johnson works at Acme Corp in Berlin with Bob Miller.")],
          ["agent", stmIds.get("Noted: Alice Johnson and Bob Miller work at Acme Corp.")],
        ],
      );
      const sourdough = view.chains.find((c: Json) => c.agent_id === "cook");
      assert.equal(sourdough.turns.length, 2);

      const graph = await ok(base, "GET", `/api/v1/operator/graph?${user}`);
      const alice = graph.nodes.find((n: Json) => n.name === "Alice Johnson");
      const byId = new Map(graph.nodes.map((n: Json) => [n.id, n.name]));
      assert.ok(
        graph.edges.some(
          (e: Json) => e.from === alice.id && /Acme Corp|Bob Miller/.test(byId.get(e.to) as string),
        ),
        JSON.stringify(graph.edges),
      );
      assert.ok(graph.edges.every((e: Json) => byId.has(e.from) && byId.has(e.to)));
      assert.equal(typeof alice.bridge_score, "number");
      assert.ok(alice.mentions >= 1);

      const entity = await ok(
        base,
        "GET",
        `/api/v1/operator/entity?${q({ tenant_id: tenant, user_id: "alice", id: alice.id })}`,
      );
      assert.equal(entity.entity.name, "Alice Johnson");
      assert.ok(entity.facts.some((f: Json) => /Acme Corp|Bob Miller/.test(f.other)));
      const stranger = await call(
        base,
        "GET",
        `/api/v1/operator/entity?${q({ tenant_id: tenant, user_id: "bob", id: alice.id })}`,
      );
      assert.equal(stranger.status, 404);

      const question = "Where does Alice Johnson work?";
      const explained = await ok(base, "POST", "/api/v1/operator/search", {
        tenant_id: tenant,
        user_id: "alice",
        query: question,
      });
      const served = await ok(base, "POST", `/api/v1/sessions/${work}/context/search`, {
        query: question,
      });
      // The same list SearchMemory gives that user, in the same order.
      assert.deepEqual(
        explained.results.map((r: Json) => [r.source_type, r.source_id, r.content]),
        served.results.map((r: Json) => [r.source_type, r.source_id, r.content]),
      );
      const page = explained.results[0];
      assert.equal(page.source_type, "dialogue_page");
      assert.equal(page.source_id, acme.id);
      assert.equal(page.lexical_rank, 1);
      assert.equal(typeof page.vector_rank, "number");
      assert.ok(page.score > 0);
      const fact = explained.results.find((r: Json) => r.source_type === "entity");
      assert.deepEqual([fact.lexical_rank, fact.vector_rank], [null, null]);
    });

    test("bad input is a 400 naming the field; an unknown user has empty lists", async (t) => {
      const settings = await env(t);
      if (!settings) return;
      const base = await start(t, settings);
      const refused: [string, "GET" | "POST", unknown, RegExp][] = [
        ["/api/v1/operator/users", "GET", undefined, /tenant_id is required/],
        ["/api/v1/operator/users?tenant_id=%20", "GET", undefined, /tenant_id is required/],
        ["/api/v1/operator/user?tenant_id=t", "GET", undefined, /user_id is required/],
        ["/api/v1/operator/graph?user_id=u", "GET", undefined, /tenant_id is required/],
        ["/api/v1/operator/entity?tenant_id=t&user_id=u", "GET", undefined, /id is required/],
        [
          "/api/v1/operator/user?tenant_id=t&tenant_id=s&user_id=u",
          "GET",
          undefined,
          /tenant_id must be a single string/,
        ],
        ["/api/v1/operator/users?tenant_id=a%00b", "GET", undefined, /tenant_id.*NUL/],
        ["/api/v1/operator/search", "POST", { tenant_id: "t", user_id: "u" }, /query is required/],
        ["/api/v1/operator/search", "POST", { tenant_id: "t", query: "x" }, /user_id is required/],
        [
          "/api/v1/operator/search",
          "POST",
          { tenant_id: "t", user_id: "u", query: "x", limit: 0 },
          /limit must be a positive integer/,
        ],
        [
          "/api/v1/operator/search",
          "POST",
          { tenant_id: "t", user_id: "u", query: "a\u0000b" },
          /query.*NUL/,
        ],
      ];
      for (const [path, method, body, message] of refused) {
        const answer = await call(base, method, path, body);
        assert.equal(answer.status, 400, `${method} ${path}`);
        assert.equal(answer.body.code, "InvalidArgument");
        assert.match(answer.body.message, message);
      }
      const nobody = q({ tenant_id: "no-such-tenant", user_id: "nobody" });
      assert.deepEqual(await ok(base, "GET", `/api/v1/operator/users?tenant_id=nobody`), {
        users: [],
      });
      assert.deepEqual(await ok(base, "GET", `/api/v1/operator/user?${nobody}`), {
        scopes: [],
        chains: [],
      });
      assert.deepEqual(await ok(base, "GET", `/api/v1/operator/graph?${nobody}`), {
        nodes: [],
        edges: [],
      });
      assert.deepEqual(
        await ok(base, "POST", "/api/v1/operator/search", {
          tenant_id: "no-such-tenant",
          user_id: "nobody",
          query: "anything",
        }),
        { results: [] },
      );
      const entity = await call(base, "GET", `/api/v1/operator/entity?${nobody}&id=not-a-uuid`);
      assert.equal(entity.status, 404);
    });
  });
}

suite("PGlite", async () => ({}));
suite("PostgreSQL", async (t) => {
  if (!(await needsServer(t, "postgres"))) return undefined;
  const pg = await createTestPostgres();
  t.after(() => pg.drop());
  return { DATABASE_URL: pg.url };
});

test("an API key caller is an operator; a JWT identity (one end user) is refused with 403", async (t) => {
  const secret = "operator-test-jwt-secret-with-32-bytes!";
  const apiKey = "operator-test-api-key";
  const keyOnly = await start(t, { ATRIUM_MEMORY_API_KEY: apiKey });
  const withJwt = await start(t, { ATRIUM_MEMORY_JWT_SECRET: secret });
  const path = "/api/v1/operator/users?tenant_id=t";
  assert.equal((await call(keyOnly, "GET", path)).status, 401);
  const operator = await call(keyOnly, "GET", path, undefined, { "x-api-key": apiKey });
  assert.deepEqual(operator, { status: 200, body: { users: [] } });

  const token = await new SignJWT({ tenant_id: "t", user_id: "alice" })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(secret));
  assert.equal((await call(withJwt, "GET", path)).status, 401);
  for (const [method, route, body] of [
    ["GET", path, undefined],
    ["GET", "/api/v1/operator/user?tenant_id=t&user_id=alice", undefined],
    ["POST", "/api/v1/operator/search", { tenant_id: "t", user_id: "alice", query: "x" }],
  ] as const) {
    const refused = await call(withJwt, method, route, body, { "x-jwt-token": token });
    assert.equal(refused.status, 403, route);
    assert.equal(refused.body.code, "PermissionDenied");
  }
  // The same token still reaches the user's own memory API.
  const own = await call(
    withJwt,
    "POST",
    "/api/v1/sessions",
    { agent_id: "a" },
    { "x-jwt-token": token },
  );
  assert.equal(own.status, 200, JSON.stringify(own.body));
});
