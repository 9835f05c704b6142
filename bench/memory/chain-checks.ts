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

/**
 * Waits, over REST, until a chain check has taken in `eventId`: the session's recent pages list
 * a checked chain holding it (a message still waiting is listed too, as a `pending` page, so
 * that alone says nothing). Chain checks take a user's messages in order, so the last one
 * stored in a chain means all are.
 */
export async function chainHolds(
  base: string,
  sessionId: string,
  eventId: string,
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`${base}/api/v1/sessions/${sessionId}/context?limit=0`);
    const { relevant_pages: pages } = (await response.json()) as {
      relevant_pages: { metadata: Record<string, string> }[];
    };
    if (
      pages.some(
        (p) =>
          p.metadata.status !== "pending" &&
          (p.metadata.event_ids ?? "").split(",").includes(eventId),
      )
    )
      return;
    if (Date.now() > deadline) throw new Error(`no chain check took in event ${eventId} in time`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
