import { existsSync, mkdirSync } from "node:fs";
import { createLogger, createSql } from "@atrium/kit";
import { startMemoryService } from "@atrium/memory";
import { createWeightedHashEmbedder } from "../../../packages/memory/src/embeddings/weighted-hash-embedder.js";
import { createRetrieval, type Tuning } from "../../../packages/memory/src/retrieval/retrieval.js";
import { createLexicalSearch } from "../../../packages/memory/src/store/lexical-search.js";
import { createVectorSearch } from "../../../packages/memory/src/store/vector-search.js";
import { Bm25 } from "./bm25.js";
import { generateDataset, KINDS } from "./dataset.js";
import { answerForms, normalize, quotes } from "./text.js";

const dir = "/tmp/recall-tune";
const dataset = generateDataset();
if (!existsSync(`${dir}/done`)) {
  mkdirSync(dir, { recursive: true });
  const svc = await startMemoryService({
    env: {
      MEMORY_HOST: "127.0.0.1",
      MEMORY_REST_PORT: "0",
      MEMORY_GRPC_PORT: "0",
      ATRIUM_DATA_DIR: dir,
      MEMORY_PROMOTER_INTERVAL: "0s",
    },
    logger: createLogger({ name: "m", level: "silent" }),
  });
  const base = svc.urls.rest;
  const post = async (p: string, b: unknown) =>
    (
      await fetch(base + p, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(b),
      })
    ).json() as any;
  for (const user of dataset.users) {
    const sessions = new Map<number, string>();
    for (const turn of dataset.turns.filter((t) => t.userId === user)) {
      let sid = sessions.get(turn.session);
      if (!sid) {
        sid = (
          await post("/api/v1/sessions", {
            tenant_id: "bench",
            user_id: user,
            agent_id: "assistant",
          })
        ).session_id;
        sessions.set(turn.session, sid!);
      }
      await post(`/api/v1/sessions/${sid}/events`, {
        role: turn.speaker === "user" ? "user" : "agent",
        type: "message",
        content: turn.text,
        timestamp: turn.timestamp,
      });
    }
  }
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    const r = await post("/api/v1/sessions", { tenant_id: "x", user_id: "x" });
    void r;
    break;
  }
  await new Promise((r) => setTimeout(r, 20000));
  await svc.stop();
  (await import("node:fs")).writeFileSync(`${dir}/done`, "");
}
for (;;) {
  const probe = await createSql({ dataDir: dir, name: "memory" });
  const n = Number(
    (
      await probe.query<{ n: string }>(
        "select count(*) n from memory_events where chain_state='pending'",
      )
    ).rows[0].n,
  );
  await probe.close();
  if (n === 0) break;
  console.log("pending", n, "- sweeping");
  const svc = await startMemoryService({
    env: {
      MEMORY_HOST: "127.0.0.1",
      MEMORY_REST_PORT: "0",
      MEMORY_GRPC_PORT: "0",
      ATRIUM_DATA_DIR: dir,
      MEMORY_PROMOTER_INTERVAL: "0s",
    },
    logger: createLogger({ name: "m", level: "silent" }),
  });
  await new Promise((r) => setTimeout(r, 30000));
  await svc.stop();
}
const sql = await createSql({ dataDir: dir, name: "memory" });
const pending = await sql.query("select count(*) n from memory_events where chain_state='pending'");
console.log("pending", pending.rows);
const embedder = createWeightedHashEmbedder();
const vectorSearch = await createVectorSearch({ sql, dimensions: 384 });
const lexical = createLexicalSearch(sql);
const turnText = new Map(dataset.turns.map((t) => [t.id, t.text]));
async function evaluate(name: string, search: (q: any, k: number) => Promise<string[]>) {
  const out: string[] = [];
  for (const k of [5, 10]) {
    let ev = 0,
      ans = 0,
      chars = 0,
      lines = 0;
    const byKind: Record<string, number[]> = {};
    for (const q of dataset.questions) {
      const contents = await search(q, k);
      chars += contents.reduce((s, c) => s + c.length, 0);
      lines += contents.join("\n").split("\n").length;
      const joined = normalize(contents.join("\n"));
      const e =
        q.evidence.filter((id: string) => quotes(joined, turnText.get(id) ?? "")).length /
        q.evidence.length;
      ev += e;
      (byKind[q.kind] ??= []).push(e);
      if (answerForms(q.answer).some((f) => joined.includes(normalize(f)))) ans++;
    }
    const n = dataset.questions.length;
    out.push(
      `k=${k} ev=${((100 * ev) / n).toFixed(1)} [${KINDS.map((kd) => ((100 * byKind[kd].reduce((a, b) => a + b, 0)) / byKind[kd].length).toFixed(0)).join("/")}] ans=${((100 * ans) / n).toFixed(1)} chars=${Math.round(chars / n)} lines=${(lines / n).toFixed(1)}`,
    );
  }
  console.log(name.padEnd(40), out.join("   "));
}
const bm = new Map(
  dataset.users.map((u) => [u, new Bm25(dataset.turns.filter((t) => t.userId === u))]),
);
await evaluate("bm25", async (q, k) =>
  bm
    .get(q.userId)!
    .search(q.text, k)
    .map((t: any) => `[${t.timestamp.slice(0, 16).replace("T", " ")}] User: ${t.text}`),
);
const variants: [string, Partial<Tuning>][] = JSON.parse(process.argv[2] ?? '[["default",{}]]');
for (const [name, tuning] of variants) {
  const r = createRetrieval({ sql, embedder, vectorSearch, lexical, tuning });
  await evaluate(name, async (q, k) =>
    (await r.search({ tenantId: "bench", userId: q.userId, text: q.text, limit: k })).map(
      (p) => p.content,
    ),
  );
}
await sql.close();
if (process.env.SHOW) {
  const sql2 = await createSql({ dataDir: dir, name: "memory" });
  const r = createRetrieval({
    sql: sql2,
    embedder,
    vectorSearch: await createVectorSearch({ sql: sql2, dimensions: 384 }),
    lexical: createLexicalSearch(sql2),
    tuning: JSON.parse(process.env.SHOW),
  });
  for (const q of dataset.questions.filter((q) => q.kind === (process.env.KIND ?? "temporal"))) {
    const pages = await r.search({ tenantId: "bench", userId: q.userId, text: q.text, limit: 10 });
    const joined = normalize(pages.map((p) => p.content).join("\n"));
    const ok = q.evidence.every((id: string) => quotes(joined, turnText.get(id) ?? ""));
    const bmok = q.evidence.every((id: string) =>
      quotes(
        normalize(
          bm
            .get(q.userId)!
            .search(q.text, 10)
            .map((t: any) => t.text)
            .join("\n"),
        ),
        turnText.get(id) ?? "",
      ),
    );
    if (!ok)
      console.log(
        bmok ? "BM25-ONLY" : "both-miss",
        "|",
        q.text,
        "|",
        q.evidence.map((id: string) => turnText.get(id)).join(" || "),
      );
  }
  await sql2.close();
}
