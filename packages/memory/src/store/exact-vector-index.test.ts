import assert from "node:assert/strict";
import { test } from "node:test";
import { createPgliteSql } from "@atrium/kit";
import { floatsFromArraySend } from "./exact-vector-index.js";

test("reads real[] from PostgreSQL's binary array format, NULL elements as NaN", async () => {
  const sql = await createPgliteSql();
  try {
    const { rows } = await sql.query<{ full: Uint8Array; empty: Uint8Array; nulls: Uint8Array }>(
      `SELECT array_send('{1.5,-2.25,3e-05,0}'::real[]) AS full,
              array_send('{}'::real[]) AS empty,
              array_send('{1,NULL}'::real[]) AS nulls`,
    );
    assert.deepEqual([...floatsFromArraySend(rows[0].full)], [1.5, -2.25, Math.fround(3e-5), 0]);
    assert.equal(floatsFromArraySend(rows[0].empty).length, 0);
    assert.deepEqual([...floatsFromArraySend(rows[0].nulls)], [1, Number.NaN]);
  } finally {
    await sql.close();
  }
});
