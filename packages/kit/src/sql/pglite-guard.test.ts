import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createPgliteSql } from "./pglite-sql.js";
import type { Sql } from "./sql.js";

// Without the guard the first test waits forever on PGlite's single connection.
const hangs = { timeout: 60_000 };

let sql: Sql;
before(async () => {
  sql = await createPgliteSql();
});
after(() => sql.close());

test(
  "PGlite: the outer Sql awaited inside its own transaction fails naming the mistake",
  hangs,
  async () => {
    const n = await sql.transaction(async (tx) => {
      const misuse = (what: string) =>
        new RegExp(
          `^Error: ${what} on the outer Sql inside sql\\.transaction\\(\\).*executor \\(tx\\)$`,
        );
      await Promise.all([
        assert.rejects(sql.query("SELECT 1"), misuse("a query")),
        assert.rejects(sql.ping(), misuse("ping")),
        assert.rejects(
          sql.transaction(async () => undefined),
          misuse("a nested transaction"),
        ),
      ]);
      // The transaction itself is still usable and commits.
      return (await tx.query<{ n: number }>("SELECT 2 AS n")).rows[0].n;
    });
    assert.equal(n, 2);
    assert.equal((await sql.query<{ n: number }>("SELECT 3 AS n")).rows[0].n, 3);
  },
);

test(
  "PGlite: a statement a transaction started but did not await runs after it ends",
  hangs,
  async () => {
    let later: Promise<unknown> | undefined;
    await sql.transaction(async (tx) => {
      await tx.query("CREATE TABLE guard_later (id int)");
      later = sql.query<{ n: number }>("SELECT count(*)::int AS n FROM guard_later");
      await tx.query("INSERT INTO guard_later VALUES (1)");
    });
    assert.deepEqual((await later) as unknown, { rows: [{ n: 1 }], rowCount: 1 });
    const nested = await sql.transaction(async () => () => sql.transaction(async () => "ok"));
    assert.equal(await nested(), "ok");
  },
);

test("PGlite: another database is usable inside a transaction", hangs, async () => {
  const other = await createPgliteSql();
  try {
    await sql.transaction(() => other.query("SELECT 1"));
  } finally {
    await other.close();
  }
});
