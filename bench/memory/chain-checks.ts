import type { Sql } from "@atrium/kit";

/** Waits until the background chain checks have caught up with every stored message. */
export async function chainChecksDone(sql: Sql) {
  for (;;) {
    const { rows } = await sql.query<{ n: string }>(
      "SELECT count(*) AS n FROM memory_events WHERE chain_state = 'pending'",
    );
    if (Number(rows[0].n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
