import type { SqlExecutor } from "@atrium/kit";
import { TURN_COLUMNS, type Turn, type TurnRow, toTurn } from "./turns.js";

/**
 * For each given agent message, the user message just before it in its session: the turn it
 * answers, which a reader needs beside the reply ("Biscuit sounds lovely." says nothing without
 * "We adopted a greyhound called Biscuit."). Agent messages that follow no user message are
 * left out.
 */
export function turnsAnswered(
  db: SqlExecutor,
  owner: { tenantId: string; userId: string },
  replyIds: string[],
): Promise<Map<string, Turn & { chainId?: string }>> {
  return adjacentTurns(db, owner, replyIds, "answered");
}

/**
 * For each given question, the other speaker's message just after it in its session: the reply,
 * where the answer to it usually is ("Did you get the job?" finds the question; "Yes, I start
 * at the clinic in May." holds what was asked for). Either way round: an agent that asks "How
 * often do you swim?" learns the fact from the user's "Twice a week", which shares no word with
 * a later question about swimming.
 */
export function repliesTo(
  db: SqlExecutor,
  owner: { tenantId: string; userId: string },
  questionIds: string[],
): Promise<Map<string, Turn & { chainId?: string }>> {
  return adjacentTurns(db, owner, questionIds, "reply");
}

async function adjacentTurns(
  db: SqlExecutor,
  owner: { tenantId: string; userId: string },
  ids: string[],
  wanted: "answered" | "reply",
): Promise<Map<string, Turn & { chainId?: string }>> {
  if (ids.length === 0) return new Map();
  // What a reply answers is the user's message before an agent's; a reply to a question is the
  // other speaker's message after it.
  const [givenRule, adjacentRule, order, step] =
    wanted === "answered"
      ? ["r.role = 'agent'", "p.role = 'user'", "DESC", "<"]
      : ["TRUE", "p.role <> r.role", "ASC", ">"];
  const { rows } = await db.query<TurnRow & { reply_id: string }>(
    // The scope's window index (partial: not superseded) walks back from the reply to the
    // session's previous message; without its predicate the planner scans the user's events.
    `SELECT r.id AS reply_id, p.id, p.chain_id, p.session_id, p.role, p.source, p.content,
       p.occurred_at
     FROM memory_events r
     CROSS JOIN LATERAL (
       SELECT ${TURN_COLUMNS}
       FROM memory_events e
       WHERE e.tenant_id = r.tenant_id AND e.user_id = r.user_id AND e.agent_id = r.agent_id
         AND e.superseded_by IS NULL AND e.seq ${step} r.seq AND e.session_id = r.session_id
         AND e.search_vector IS NOT NULL
       ORDER BY e.seq ${order} LIMIT 1
     ) p
     WHERE r.id = ANY($3::uuid[]) AND r.tenant_id = $1 AND r.user_id = $2 AND ${givenRule}
       AND ${adjacentRule}`,
    [owner.tenantId, owner.userId, ids],
  );
  return new Map(rows.map((r) => [r.reply_id, toTurn(r)]));
}

/** A message next to another by the same speaker; `before` when it came first. */
export interface Neighbour {
  turn: Turn & { chainId?: string };
  before: boolean;
}

/**
 * For each given message, the messages just before and just after it in its session by the same
 * speaker, said within `withinSeconds` of it: one thought typed as several messages ("I finally
 * picked it up" after "Have you read Orange?"), where a question's words often sit in the one
 * message and its answer in the next.
 */
export async function sameSpeakerNeighbours(
  db: SqlExecutor,
  owner: { tenantId: string; userId: string },
  ids: string[],
  withinSeconds: number,
): Promise<Map<string, Neighbour[]>> {
  if (ids.length === 0) return new Map();
  const side = (step: "<" | ">", order: "DESC" | "ASC") => `(
       SELECT ${TURN_COLUMNS}, e.seq
       FROM memory_events e
       WHERE e.tenant_id = r.tenant_id AND e.user_id = r.user_id AND e.agent_id = r.agent_id
         AND e.superseded_by IS NULL AND e.seq ${step} r.seq AND e.session_id = r.session_id
         AND e.search_vector IS NOT NULL
       ORDER BY e.seq ${order} LIMIT 1)`;
  const { rows } = await db.query<TurnRow & { of_id: string; before: boolean }>(
    // The same window index walk as adjacentTurns, once each way.
    `SELECT r.id AS of_id, p.id, p.chain_id, p.session_id, p.role, p.source, p.content,
       p.occurred_at, p.seq < r.seq AS before
     FROM memory_events r
     CROSS JOIN LATERAL (${side("<", "DESC")} UNION ALL ${side(">", "ASC")}) p
     WHERE r.id = ANY($3::uuid[]) AND r.tenant_id = $1 AND r.user_id = $2 AND p.role = r.role
       AND abs(extract(epoch FROM p.occurred_at - r.occurred_at)) <= $4
     ORDER BY p.seq`,
    [owner.tenantId, owner.userId, ids, withinSeconds],
  );
  const found = new Map<string, Neighbour[]>();
  for (const r of rows) {
    const neighbour = { turn: toTurn(r), before: r.before };
    const list = found.get(r.of_id);
    if (list) list.push(neighbour);
    else found.set(r.of_id, [neighbour]);
  }
  return found;
}
