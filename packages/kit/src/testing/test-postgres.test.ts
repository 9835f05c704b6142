import assert from "node:assert/strict";
import { test } from "node:test";
import { createPostgresSql } from "../sql/postgres-sql.js";
import { needsServer, postgresUrl } from "./servers.js";
import { createTestPostgres } from "./test-postgres.js";

async function schemaExists(schema: string): Promise<boolean> {
  const sql = await createPostgresSql({ url: postgresUrl(), max: 1 });
  try {
    const { rowCount } = await sql.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    return rowCount > 0;
  } finally {
    await sql.close();
  }
}

test("createTestPostgres gives each caller its own schema and drops it", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const [first, second] = await Promise.all([createTestPostgres(), createTestPostgres()]);
  t.after(() => Promise.all([first.drop(), second.drop()]));
  assert.match(first.schema, /^t_[0-9a-f]{12}$/);
  assert.notEqual(first.schema, second.schema);

  await first.sql.query("CREATE TABLE notes (body text)");
  await first.sql.query("INSERT INTO notes VALUES ('mine')");
  await second.sql.query("CREATE TABLE notes (body text)");
  const seen = await second.sql.query("SELECT body FROM notes");
  assert.deepEqual(seen.rows, []);

  const viaUrl = await createPostgresSql({ url: first.url, max: 1 });
  t.after(() => viaUrl.close());
  const shared = await viaUrl.query("SELECT body, current_schema() AS schema FROM notes");
  assert.deepEqual(shared.rows, [{ body: "mine", schema: first.schema }]);

  await first.drop();
  await first.drop();
  assert.equal(await schemaExists(first.schema), false);
  assert.equal(await schemaExists(second.schema), true);
});
