import assert from "node:assert/strict";
import { after, describe, type TestContext, test } from "node:test";
import { needsServer } from "../testing/servers.js";
import { createTestPostgres } from "../testing/test-postgres.js";
import { createPgliteSql } from "./pglite-sql.js";
import type { Sql } from "./sql.js";

interface Adapter {
  name: "pglite" | "postgres";
  open(): Promise<{ sql: Sql; dispose(): Promise<void> }>;
}

const adapters: Adapter[] = [
  {
    name: "pglite",
    async open() {
      const sql = await createPgliteSql();
      return { sql, dispose: () => sql.close() };
    },
  },
  {
    name: "postgres",
    async open() {
      const db = await createTestPostgres();
      return { sql: db.sql, dispose: db.drop };
    },
  },
];

for (const adapter of adapters) {
  describe(`Sql contract (${adapter.name})`, () => {
    // One database per adapter for the whole suite: PGlite takes seconds to start.
    let opened: ReturnType<Adapter["open"]> | undefined;
    after(async () => {
      if (opened) await (await opened).dispose();
    });

    async function open(t: TestContext): Promise<Sql | undefined> {
      if (adapter.name === "postgres" && !(await needsServer(t, "postgres"))) return undefined;
      opened ??= adapter.open();
      return (await opened).sql;
    }

    async function withTable(t: TestContext, sql: Sql, name: string, columns: string) {
      await sql.query(`CREATE TABLE ${name} (${columns})`);
      t.after(() => sql.query(`DROP TABLE IF EXISTS ${name}`));
    }

    test("query binds parameters and reports rows and counts", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      await withTable(t, sql, "contract_params", "id int PRIMARY KEY, label text NOT NULL");
      const inserted = await sql.query<{ id: number }>(
        "INSERT INTO contract_params (id, label) VALUES ($1, $2), ($3, $4) RETURNING id",
        [1, "one", 2, "two"],
      );
      assert.deepEqual(inserted.rows, [{ id: 1 }, { id: 2 }]);
      assert.equal(inserted.rowCount, 2);

      const selected = await sql.query<{ label: string }>(
        "SELECT label FROM contract_params WHERE id = $1",
        [2],
      );
      assert.deepEqual(selected.rows, [{ label: "two" }]);
      assert.equal(selected.rowCount, 1);

      const updated = await sql.query("UPDATE contract_params SET label = upper(label)");
      assert.equal(updated.rowCount, 2);
      assert.deepEqual(updated.rows, []);
    });

    test("a failed statement's error names the failure and carries none of its values", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      await withTable(t, sql, "contract_values", "id int PRIMARY KEY, note text NOT NULL");
      await sql.query("INSERT INTO contract_values VALUES ($1, $2)", [1, "first"]);
      const secret = "what the user told us in confidence";
      const failure = await sql
        .query("INSERT INTO contract_values VALUES ($1, $2)", [1, secret])
        .then(() => assert.fail("a duplicate key must fail"))
        .catch((error: unknown) => error);
      assert.match(String((failure as Error).message), /duplicate key/);
      // What a logger prints of an error: its own properties, as the kit's redactor walks them.
      const printed = JSON.stringify(failure, Object.getOwnPropertyNames(failure));
      assert.ok(!printed.includes(secret), printed);
    });

    test("a parameterless query runs several statements and returns the last result", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      t.after(() => sql.query("DROP TABLE IF EXISTS contract_script"));
      const result = await sql.query<{ n: number }>(
        `CREATE TABLE contract_script (n int);
         INSERT INTO contract_script VALUES (1), (2);
         SELECT sum(n)::int AS n FROM contract_script;`,
      );
      assert.deepEqual(result.rows, [{ n: 3 }]);
    });

    test("a statement error rejects with the Postgres error code", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      await assert.rejects(sql.query("SELECT * FROM contract_missing_table"), {
        code: "42P01",
      });
      await assert.rejects(sql.query("SELECT $1::int", ["not a number"]), { code: "22P02" });
    });

    test("transaction commits when the callback resolves", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      await withTable(t, sql, "contract_commit", "id int");
      const value = await sql.transaction(async (tx) => {
        await tx.query("INSERT INTO contract_commit VALUES ($1)", [1]);
        await tx.query("INSERT INTO contract_commit VALUES ($1)", [2]);
        return "done";
      });
      assert.equal(value, "done");
      const { rows } = await sql.query("SELECT id FROM contract_commit ORDER BY id");
      assert.deepEqual(rows, [{ id: 1 }, { id: 2 }]);
    });

    test("transaction rolls back everything when the callback throws", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      await withTable(t, sql, "contract_rollback", "id int");
      const failure = new Error("callback failed");
      await assert.rejects(
        sql.transaction(async (tx) => {
          await tx.query("INSERT INTO contract_rollback VALUES (1)");
          throw failure;
        }),
        (error) => error === failure,
      );
      await assert.rejects(
        sql.transaction(async (tx) => {
          await tx.query("INSERT INTO contract_rollback VALUES (2)");
          await tx.query("INSERT INTO contract_rollback VALUES ('not an int')");
        }),
        { code: "22P02" },
      );
      const { rows } = await sql.query("SELECT id FROM contract_rollback");
      assert.deepEqual(rows, []);
    });

    test("a transaction executor kept past its callback refuses to run", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      const leaked = await sql.transaction(async (tx) => tx);
      await assert.rejects(leaked.query("SELECT 1"), /transaction is already finished/);
    });

    test("concurrent transactions each commit or roll back on their own", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      await withTable(t, sql, "contract_counter", "id int PRIMARY KEY, n int NOT NULL");
      await withTable(t, sql, "contract_log", "worker int NOT NULL");
      await sql.query("INSERT INTO contract_counter VALUES (1, 0)");
      const workers = Array.from({ length: 8 }, (_, worker) => worker);
      const outcomes = await Promise.allSettled(
        workers.map((worker) =>
          sql.transaction(async (tx) => {
            const { rows } = await tx.query<{ n: number }>(
              "SELECT n FROM contract_counter WHERE id = 1 FOR UPDATE",
            );
            await tx.query("UPDATE contract_counter SET n = $1 WHERE id = 1", [rows[0]!.n + 1]);
            await tx.query("INSERT INTO contract_log (worker) VALUES ($1)", [worker]);
            if (worker % 4 === 3) throw new Error(`worker ${worker} gives up`);
          }),
        ),
      );
      const failed = outcomes.filter((outcome) => outcome.status === "rejected").length;
      assert.equal(failed, 2);
      const counter = await sql.query<{ n: number }>("SELECT n FROM contract_counter");
      assert.deepEqual(counter.rows, [{ n: 6 }]);
      const log = await sql.query<{ worker: number }>(
        "SELECT worker FROM contract_log ORDER BY worker",
      );
      assert.deepEqual(
        log.rows.map((row) => row.worker),
        workers.filter((worker) => worker % 4 !== 3),
      );
    });

    test("a query issued during a transaction never sees its uncommitted rows", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      await withTable(t, sql, "contract_isolation", "id int");
      let outside: Promise<{ rows: { n: number }[] }> | undefined;
      await assert.rejects(
        sql.transaction(async (tx) => {
          await tx.query("INSERT INTO contract_isolation VALUES (1)");
          outside = sql.query<{ n: number }>("SELECT count(*)::int AS n FROM contract_isolation");
          await tx.query("INSERT INTO contract_isolation VALUES (2)");
          await tx.query("SELECT pg_sleep(0)");
          throw new Error("roll back");
        }),
        /roll back/,
      );
      assert.deepEqual((await outside!).rows, [{ n: 0 }]);
    });

    test("jsonb, timestamptz, text[], int8 and numeric round-trip", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      await withTable(
        t,
        sql,
        "contract_types",
        "doc jsonb, list jsonb, at timestamptz, tags text[], big int8, huge int8, amount numeric",
      );
      const doc = { name: "ada", nested: { ok: true, n: 1.5 }, list: [1, "two", null] };
      const at = new Date("2024-05-06T07:08:09.123Z");
      const tags = ["a", "b c", 'quote"d', ""];
      await sql.query("INSERT INTO contract_types VALUES ($1, $2, $3, $4, $5, $6, $7)", [
        doc,
        JSON.stringify([1, 2]),
        at,
        tags,
        42,
        "9007199254740993",
        "12.50",
      ]);
      const { rows } = await sql.query<{
        doc: unknown;
        list: unknown;
        at: Date;
        tags: string[];
        big: number;
        huge: bigint;
        amount: string;
      }>("SELECT * FROM contract_types");
      assert.deepEqual(rows[0]!.doc, doc);
      assert.deepEqual(rows[0]!.list, [1, 2]);
      assert.ok(rows[0]!.at instanceof Date);
      assert.equal(rows[0]!.at.toISOString(), at.toISOString());
      assert.deepEqual(rows[0]!.tags, tags);
      assert.equal(rows[0]!.big, 42);
      assert.equal(rows[0]!.huge, 9007199254740993n);
      assert.equal(rows[0]!.amount, "12.50");
    });

    test("ping answers while open", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      await sql.ping();
    });

    test("hasVector tells the truth, and vectors work with an HNSW index where it does", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      const hasVector = await sql.hasVector();
      if (adapter.name === "pglite") assert.equal(hasVector, true);
      if (!hasVector) {
        const catalog = await sql.query(
          "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'",
        );
        assert.equal(catalog.rowCount, 0);
        return;
      }
      await sql.query("CREATE EXTENSION IF NOT EXISTS vector");
      await withTable(t, sql, "contract_vectors", "id int PRIMARY KEY, embedding vector(3)");
      await sql.query(
        "CREATE INDEX contract_vectors_hnsw ON contract_vectors USING hnsw (embedding vector_cosine_ops)",
      );
      await sql.query("INSERT INTO contract_vectors VALUES ($1, $2), ($3, $4), ($5, $6)", [
        1,
        "[1,0,0]",
        2,
        "[0,1,0]",
        3,
        "[0.9,0.1,0]",
      ]);
      const nearest =
        "SELECT id, 1 - (embedding <=> $1) AS similarity FROM contract_vectors ORDER BY embedding <=> $1 LIMIT 2";
      const { plan, rows } = await sql.transaction(async (tx) => {
        await tx.query("SET LOCAL enable_seqscan = off");
        const explained = await tx.query<{ "QUERY PLAN": string }>(`EXPLAIN ${nearest}`, [
          "[1,0,0]",
        ]);
        const found = await tx.query<{ id: number; similarity: number }>(nearest, ["[1,0,0]"]);
        return {
          plan: explained.rows.map((row) => row["QUERY PLAN"]).join("\n"),
          rows: found.rows,
        };
      });
      assert.match(plan, /contract_vectors_hnsw/);
      assert.deepEqual(
        rows.map((row) => row.id),
        [1, 3],
      );
      assert.ok(Math.abs(rows[0]!.similarity - 1) < 1e-9);
      assert.ok(rows[1]!.similarity > 0.9 && rows[1]!.similarity < 1);
    });
  });
}

for (const adapter of adapters) {
  test(`close is idempotent and stops further work (${adapter.name})`, async (t) => {
    if (adapter.name === "postgres" && !(await needsServer(t, "postgres"))) return;
    const { sql, dispose } = await adapter.open();
    t.after(dispose);
    await sql.close();
    await sql.close();
    await assert.rejects(sql.ping());
  });
}
