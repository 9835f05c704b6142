import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Cache, Sql } from "@atrium/kit";
import { eventually } from "@atrium/kit/testing";
import { type Json, ok, type Transport } from "./memory-service-harness.js";

/**
 * The canary test of Forget: a phrase stored through every write path (turns, events, an
 * idempotent write, metadata, a payload, facts the graph extracts), erased, then looked for
 * through every read path of every instance and in a dump of the database, the blob store and
 * the cached windows. Shared by the PGlite and the PostgreSQL + Redis runs.
 */

/** Words that occur nowhere but in what the test stores (stems included). */
const CANARY = /zorblax|quentinworth|vexilion/i;
/** What the erasure of given events (not the whole user) must take with it. */
const EVENT_CANARY = /vaultcode|payloadmark/i;
const AGENT_CANARY = /secondagentmark/i;

export interface CanaryEnv {
  /** Every instance's REST transport; writes go to the first, reads go to all. */
  instances: Transport[];
  restUrls: string[];
  /** The shared database; absent for PGlite, which its instance owns (dumped after it stops). */
  sql?: Sql;
  blobDir: string;
  /** The cache the instances share, when it is Redis. */
  cache?: Cache;
  tenant: string;
}

/** Every row of every table of the public schema, as text. */
async function databaseDump(sql: Sql): Promise<string> {
  const { rows: tables } = await sql.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  );
  const parts: string[] = [];
  for (const { name } of tables) {
    const { rows } = await sql.query<{ row: string }>(`SELECT t::text AS row FROM "${name}" t`);
    for (const r of rows) parts.push(`${name}: ${r.row}`);
  }
  return parts.join("\n");
}

function blobDump(dir: string): string {
  const parts: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else parts.push(`${path}: ${readFileSync(path, "latin1")}`);
    }
  };
  walk(dir);
  return parts.join("\n");
}

async function operatorViews(baseUrl: string, tenant: string): Promise<string> {
  const q = `tenant_id=${tenant}&user_id=canary-user`;
  const get = async (path: string) => (await fetch(`${baseUrl}/api/v1/operator/${path}`)).text();
  const search = await fetch(`${baseUrl}/api/v1/operator/search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ tenant_id: tenant, user_id: "canary-user", query: "Zorblax Vexilion" }),
  });
  return [
    await get(`users?tenant_id=${tenant}`),
    await get(`user?${q}`),
    await get(`graph?${q}`),
    await search.text(),
  ].join("\n");
}

/** Everything every read path of every instance answers for the user's sessions. */
async function readEverything(env: CanaryEnv, sessions: string[]): Promise<string> {
  const parts: string[] = [];
  for (const [i, t] of env.instances.entries()) {
    for (const session_id of sessions) {
      for (const query of [
        "Zorblax",
        "Vexilion Corp",
        "Where does Zorblax Quentinworth work?",
        "vaultcode payloadmark secondagentmark",
      ]) {
        parts.push(JSON.stringify(await ok(t, "searchMemory", { session_id, query })));
        parts.push(JSON.stringify(await ok(t, "getContext", { session_id, query, limit: 100 })));
      }
      parts.push(JSON.stringify(await ok(t, "getContext", { session_id, limit: 100 })));
      parts.push(JSON.stringify(await ok(t, "getContext", { session_id })));
    }
    parts.push(await operatorViews(env.restUrls[i], env.tenant));
  }
  return parts.join("\n");
}

async function cachedWindows(env: CanaryEnv): Promise<string> {
  if (!env.cache) return "";
  const lists = await Promise.all(
    ["a1", "a2"].map((agent) => env.cache?.lrange(`stm:${env.tenant}:canary-user:${agent}`, 0, -1)),
  );
  return lists.flat().join("\n");
}

/** Waits until the chain checks ran: from the database, or (PGlite) until search finds pages. */
async function chainChecksDone(env: CanaryEnv, probes: [string, string][]) {
  const { sql, tenant } = env;
  await eventually(
    "every chain check ran",
    async () => {
      if (!sql) {
        for (const [session_id, query] of probes) {
          const { results } = await ok(env.instances[0], "searchMemory", { session_id, query });
          if (results[0]?.source_type !== "dialogue_page") return false;
        }
        return true;
      }
      const { rows } = await sql.query<{ n: string }>(
        "SELECT count(*) AS n FROM memory_events WHERE tenant_id = $1 AND chain_state = 'pending'",
        [tenant],
      );
      return Number(rows[0].n) === 0;
    },
    30_000,
  );
}

/** Lines of a database dump that match. */
export async function databaseHits(sql: Sql, pattern: RegExp): Promise<string[]> {
  return (await databaseDump(sql)).split("\n").filter((line) => pattern.test(line));
}

/** Where a pattern still occurs: an empty list when nothing does. */
async function hits(env: CanaryEnv, sessions: string[], pattern: RegExp): Promise<string[]> {
  const places: [string, string][] = [
    ["read paths", await readEverything(env, sessions)],
    ["database", env.sql ? await databaseDump(env.sql) : ""],
    ["blob store", blobDump(env.blobDir)],
    ["cached windows", await cachedWindows(env)],
  ];
  return places.flatMap(([where, text]) =>
    text
      .split("\n")
      .filter((line) => pattern.test(line))
      .map((line) => `${where}: ${line.slice(0, 300)}`),
  );
}

/** The canary pattern: what must be found nowhere after the user is forgotten. */
export { CANARY };

export async function runCanary(env: CanaryEnv) {
  const [w] = env.instances;
  const session = async (agent_id: string) =>
    (await ok(w, "createSession", { tenant_id: env.tenant, user_id: "canary-user", agent_id }))
      .session_id as string;
  const s1 = await session("a1");
  const s2 = await session("a2");

  await ok(
    w,
    "storeInteraction",
    {
      session_id: s1,
      user_message: "Zorblax Quentinworth works at Vexilion Corp in Oslo with Bob Miller.",
      agent_response: "Noted: Zorblax Quentinworth and Bob Miller work at Vexilion Corp.",
      metadata: { project: "zorblax" },
    },
    { "idempotency-key": "zorblax-retry-1" },
  );
  const vault = await ok(w, "storeEvent", {
    session_id: s1,
    role: "user",
    type: "message",
    content: "Remember the vaultcode for the Oslo office is in the drawer.",
  });
  const payload = await ok(w, "storeEvent", {
    session_id: s1,
    role: "agent",
    type: "observation",
    content: "Scanned the payloadmark receipt.",
    payload: Buffer.from("payloadmark receipt scan").toString("base64"),
    mime_type: "text/plain",
  });
  // A different topic closes the first chain, which can then be promoted into the graph.
  await ok(w, "storeInteraction", {
    session_id: s1,
    user_message: "What is a good recipe for tomato soup tonight?",
    agent_response: "Roast the tomatoes first.",
  });
  await ok(w, "storeInteraction", {
    session_id: s2,
    user_message: "The secondagentmark note: Zorblax prefers tea.",
  });
  await chainChecksDone(env, [
    [s1, "tomato soup"],
    [s1, "vaultcode"],
    [s2, "secondagentmark"],
  ]);
  await eventually(
    "the graph holds the canary's facts",
    async () => {
      await ok(w, "triggerGraphAnalytics");
      const { results } = await ok(w, "searchMemory", {
        session_id: s1,
        query: "Where does Zorblax Quentinworth work?",
      });
      return results.some((r: Json) => r.source_type === "entity" && CANARY.test(r.content));
    },
    30_000,
  );
  // Every instance finds it before (so the zero below is not of a search that finds nothing).
  for (const t of env.instances) {
    const { results } = await ok(t, "searchMemory", { session_id: s1, query: "Zorblax" });
    assert.ok(results.some((r: Json) => CANARY.test(r.content)));
  }
  assert.ok((await hits(env, [s1, s2], EVENT_CANARY)).length > 0);

  // (a) Given events: the message and the event with a payload.
  const byEvents = await ok(env.instances.at(-1) as Transport, "forget", {
    session_id: s1,
    event_ids: [vault.event_id, payload.event_id],
  });
  assert.equal(byEvents.success, true);
  assert.equal(byEvents.events_erased, 2);
  assert.equal(byEvents.payloads_erased, 1);
  assert.ok(byEvents.chains_rebuilt + byEvents.chains_erased >= 1);
  assert.deepEqual(await hits(env, [s1, s2], EVENT_CANARY), []);
  // The rest of the user's memory is still there.
  const { results } = await ok(w, "searchMemory", { session_id: s1, query: "tomato soup" });
  assert.ok(results.some((r: Json) => /tomato/i.test(r.content)));

  // (b) One agent of the user.
  const byAgent = await ok(w, "forget", { session_id: s2, scope: "agent" });
  assert.equal(byAgent.events_erased, 1);
  assert.deepEqual(await hits(env, [s1, s2], AGENT_CANARY), []);
  assert.ok((await hits(env, [s1], CANARY)).length > 0, "agent a1's memory is kept");

  // (b) The user across agents.
  const byUser = await ok(w, "forget", { session_id: s1, scope: "user" });
  assert.ok(byUser.events_erased >= 4);
  assert.ok(byUser.entities_erased >= 1);
  assert.deepEqual(await hits(env, [s1, s2], CANARY), []);

  // A retried write with the erased write's key stores again instead of answering "stored".
  await ok(
    w,
    "storeInteraction",
    { session_id: s1, user_message: "A retried turn after the erasure." },
    { "idempotency-key": "zorblax-retry-1" },
  );
  const context = await ok(env.instances.at(-1) as Transport, "getContext", { session_id: s1 });
  assert.deepEqual(
    context.stm_events.map((e: Json) => e.content),
    ["A retried turn after the erasure."],
  );

  // The retried write claimed the key anew; erased with its turn, so the dump after ends clean.
  await ok(w, "forget", { session_id: s1, scope: "user" });
  if (!env.sql) return;
  // Each erasure is audited: who, which scope, counts.
  const { rows } = await env.sql.query<{
    kind: string;
    agent_id: string | null;
    requested_by: string;
    events_erased: number;
  }>(
    "SELECT kind, agent_id, requested_by, events_erased FROM memory_erasures WHERE tenant_id = $1 ORDER BY created_at",
    [env.tenant],
  );
  assert.deepEqual(
    rows.map((r) => [r.kind, r.agent_id, r.events_erased]),
    [
      ["events", null, 2],
      ["agent", "a2", 1],
      ["user", null, byUser.events_erased],
      ["user", null, 1],
    ],
  );
  assert.match(rows[0].requested_by, /^session:/);
}
