import { setImmediate } from "node:timers/promises";
import type { Sql } from "@atrium/kit";
import type { VectorHit, VectorQuery } from "./vector-query.js";

interface UserVectors {
  version: number;
  dimensions: number;
  ids: string[];
  agentIds: string[];
  metadata: Record<string, string>[];
  /**
   * Column-major: dimension i of row r at `i * capacity + r`, so a search walks only the
   * dimensions its query uses. Rows of removed chains are swapped out.
   */
  matrix: Float32Array;
  /** Rows the matrix has room for. */
  capacity: number;
  norms: Float32Array;
  rowById: Map<string, number>;
  count: number;
}

interface ChangedRow {
  id: string;
  agent_id: string;
  status: string;
  metadata: Record<string, string>;
  /** `array_send(embedding)`: PostgreSQL's binary array format. */
  embedding: Uint8Array;
}

/**
 * The floats of a one-dimensional real[] in PostgreSQL's binary array format (array_send): a
 * header (dimensions, null flag, element type, then size and lower bound per dimension), then
 * per element its byte length and big-endian value. Reading this instead of the text form
 * ("{0.0123,…}" through the array parser) made loading a large user several times faster.
 */
export function floatsFromArraySend(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dimensions = view.getInt32(0);
  if (dimensions === 0) return new Float32Array(0);
  if (dimensions !== 1) throw new Error(`expected a one-dimensional array, got ${dimensions}`);
  const length = view.getInt32(12);
  const floats = new Float32Array(length);
  let offset = 20;
  for (let i = 0; i < length; i++) {
    const size = view.getInt32(offset);
    offset += 4;
    // A NULL element (size -1) cannot be compared with anything.
    floats[i] = size === 4 ? view.getFloat32(offset) : Number.NaN;
    offset += Math.max(0, size);
  }
  return floats;
}

/**
 * The dot products of rows `from` to `to` with `q` into `dots` (row `from` at 0), column by
 * column over the query's non-zero dimensions only (a zero adds nothing). A plain function of its
 * own, which V8 optimizes whole (inside the async search only its loops were, on stack
 * replacement): with eight columns per pass, 100,000 chains of 100 dimensions take 10–13 ms
 * where they took 13–19 ms.
 */
function dotProducts(
  matrix: Float32Array,
  capacity: number,
  rows: { from: number; to: number },
  q: Float32Array,
  used: number[],
  dots: Float64Array,
): void {
  const { from, to } = rows;
  dots.fill(0, 0, to - from);
  let k = 0;
  // Eight columns per pass: an eighth of the reads and writes of `dots`, which bound the loop
  // (1.4× faster than four per pass alone; sixteen gain nothing more).
  for (; k + 7 < used.length; k += 8) {
    const c0 = used[k] * capacity;
    const c1 = used[k + 1] * capacity;
    const c2 = used[k + 2] * capacity;
    const c3 = used[k + 3] * capacity;
    const c4 = used[k + 4] * capacity;
    const c5 = used[k + 5] * capacity;
    const c6 = used[k + 6] * capacity;
    const c7 = used[k + 7] * capacity;
    const q0 = q[used[k]];
    const q1 = q[used[k + 1]];
    const q2 = q[used[k + 2]];
    const q3 = q[used[k + 3]];
    const q4 = q[used[k + 4]];
    const q5 = q[used[k + 5]];
    const q6 = q[used[k + 6]];
    const q7 = q[used[k + 7]];
    for (let row = from; row < to; row++) {
      dots[row - from] +=
        q0 * matrix[c0 + row] +
        q1 * matrix[c1 + row] +
        q2 * matrix[c2 + row] +
        q3 * matrix[c3 + row] +
        q4 * matrix[c4 + row] +
        q5 * matrix[c5 + row] +
        q6 * matrix[c6 + row] +
        q7 * matrix[c7 + row];
    }
  }
  for (; k < used.length; k++) {
    const qa = q[used[k]];
    const ca = used[k] * capacity;
    for (let row = from; row < to; row++) dots[row - from] += qa * matrix[ca + row];
  }
}

/**
 * Ranks rows `from` to `to` (their dot products in `dots`, row `from` at 0) into `top`, kept
 * sorted best first with at most `limit` hits; k is small (≤ 100), so insertion beats a heap. A
 * plain function, like dotProducts, so that V8 optimizes it whole.
 */
function rankRows(
  u: UserVectors,
  rows: { from: number; to: number },
  dots: Float64Array,
  qNorm: number,
  scope: { agentId?: string; filter: [string, string][]; limit: number },
  top: VectorHit[],
): void {
  const { from, to } = rows;
  const { agentIds, metadata, norms, ids } = u;
  const { agentId, filter, limit } = scope;
  for (let row = from; row < to; row++) {
    if (agentId !== undefined && agentIds[row] !== agentId) continue;
    if (filter.length > 0 && !filter.every(([k, v]) => metadata[row][k] === v)) continue;
    const denominator = norms[row] * qNorm;
    const similarity = denominator === 0 ? 0 : dots[row - from] / denominator;
    if (top.length === limit && similarity < top[limit - 1].similarity) continue;
    const id = ids[row];
    if (top.length === limit) {
      const worst = top[limit - 1];
      if (similarity === worst.similarity && id > worst.chainId) continue;
      top.pop();
    }
    let at = top.length;
    while (
      at > 0 &&
      (top[at - 1].similarity < similarity ||
        (top[at - 1].similarity === similarity && top[at - 1].chainId > id))
    ) {
      at--;
    }
    top.splice(at, 0, { chainId: id, similarity });
  }
}

/** Rows scanned between two turns of the event loop (about 2 ms at 100 dimensions). */
const SCAN_ROWS = 16384;

export interface ExactVectorIndexOptions {
  sql: Sql;
  /** Users whose vectors are kept in memory at once; the least recently searched go first. */
  maxUsers?: number;
}

/**
 * Exact cosine search over a user's chains without pgvector: the user's vectors are held in
 * memory as one Float32Array and kept current through the per-user version counter and
 * tombstones of migration 0002 (one indexed query per search when nothing changed). Any number
 * of instances stay correct, because each catches up from the database, never from a peer.
 */
export function createExactVectorIndex(options: ExactVectorIndexOptions) {
  const { sql } = options;
  const maxUsers = options.maxUsers ?? 16;
  const users = new Map<string, UserVectors>();
  const loading = new Map<string, Promise<UserVectors>>();
  // One slice's dot products, shared by all searches: a slice is scored and ranked before any
  // other search runs.
  const dots = new Float64Array(SCAN_ROWS);

  function ensureCapacity(u: UserVectors, dimensions: number, rows: number) {
    if (u.dimensions !== dimensions && u.count === 0) {
      u.dimensions = dimensions;
      u.capacity = 0;
    }
    if (u.capacity >= rows) return;
    const capacity = Math.max(rows, Math.ceil(u.capacity * 1.5), 64);
    const d = u.dimensions;
    const matrix = new Float32Array(capacity * d);
    for (let i = 0; i < d; i++) {
      matrix.set(u.matrix.subarray(i * u.capacity, i * u.capacity + u.count), i * capacity);
    }
    const norms = new Float32Array(capacity);
    norms.set(u.norms.subarray(0, u.count));
    u.matrix = matrix;
    u.norms = norms;
    u.capacity = capacity;
  }

  function removeRow(u: UserVectors, id: string) {
    const row = u.rowById.get(id);
    if (row === undefined) return;
    const last = u.count - 1;
    if (row !== last) {
      const { matrix, capacity } = u;
      for (let i = 0; i < u.dimensions; i++)
        matrix[i * capacity + row] = matrix[i * capacity + last];
      u.norms[row] = u.norms[last];
      u.ids[row] = u.ids[last];
      u.agentIds[row] = u.agentIds[last];
      u.metadata[row] = u.metadata[last];
      u.rowById.set(u.ids[row], row);
    }
    u.ids.pop();
    u.agentIds.pop();
    u.metadata.pop();
    u.rowById.delete(id);
    u.count--;
  }

  function upsertRow(u: UserVectors, r: ChangedRow) {
    if (r.status === "archived") {
      removeRow(u, r.id);
      return;
    }
    const embedding = floatsFromArraySend(r.embedding);
    ensureCapacity(u, embedding.length, u.count + 1);
    // A chain whose vector has another size (a model change) cannot be compared: drop it.
    if (embedding.length !== u.dimensions) {
      removeRow(u, r.id);
      return;
    }
    let row = u.rowById.get(r.id);
    if (row === undefined) {
      row = u.count++;
      u.rowById.set(r.id, row);
      u.ids[row] = r.id;
    }
    u.agentIds[row] = r.agent_id;
    u.metadata[row] = r.metadata;
    let norm = 0;
    for (let i = 0; i < u.dimensions; i++) {
      const x = embedding[i];
      u.matrix[i * u.capacity + row] = x;
      norm += x * x;
    }
    u.norms[row] = Math.sqrt(norm);
  }

  async function catchUp(tenantId: string, userId: string, u: UserVectors): Promise<void> {
    const { rows } = await sql.query<{ version: string }>(
      "SELECT version FROM memory_vector_versions WHERE tenant_id = $1 AND user_id = $2",
      [tenantId, userId],
    );
    const latest = Number(rows[0]?.version ?? 0);
    if (latest === u.version) return;
    const changed = await sql.query<ChangedRow>(
      `SELECT id, agent_id, status, metadata, array_send(embedding) AS embedding FROM memory_chains
       WHERE tenant_id = $1 AND user_id = $2 AND vector_version > $3 AND vector_version <= $4`,
      [tenantId, userId, u.version, latest],
    );
    const removed = await sql.query<{ chain_id: string }>(
      `SELECT chain_id FROM memory_vector_tombstones
       WHERE tenant_id = $1 AND user_id = $2 AND version > $3 AND version <= $4`,
      [tenantId, userId, u.version, latest],
    );
    for (const r of removed.rows) removeRow(u, r.chain_id);
    for (const r of changed.rows) upsertRow(u, r);
    u.version = latest;
  }

  async function vectorsOf(tenantId: string, userId: string): Promise<UserVectors> {
    const key = JSON.stringify([tenantId, userId]);
    let u = users.get(key);
    if (!u) {
      let pending = loading.get(key);
      if (!pending) {
        const fresh: UserVectors = {
          version: 0,
          dimensions: 0,
          ids: [],
          agentIds: [],
          metadata: [],
          matrix: new Float32Array(0),
          capacity: 0,
          norms: new Float32Array(0),
          rowById: new Map(),
          count: 0,
        };
        pending = catchUp(tenantId, userId, fresh).then(() => fresh);
        loading.set(key, pending);
        pending.finally(() => loading.delete(key)).catch(() => undefined);
      }
      u = await pending;
      users.set(key, u);
      while (users.size > maxUsers) users.delete(users.keys().next().value as string);
    } else {
      await catchUp(tenantId, userId, u);
      // Most recently searched last, so eviction takes the coldest user.
      users.delete(key);
      users.set(key, u);
    }
    return u;
  }

  return {
    async search(query: VectorQuery): Promise<VectorHit[]> {
      const u = await vectorsOf(query.tenantId, query.userId);
      const d = u.dimensions;
      if (u.count === 0 || query.embedding.length !== d || query.limit <= 0) return [];
      const q = Float32Array.from(query.embedding);
      let qNorm = 0;
      for (let i = 0; i < d; i++) qNorm += q[i] * q[i];
      qNorm = Math.sqrt(qNorm);
      // Still exhaustive, at the cost of non-zero dimensions × rows, which for a short hashed
      // query is a sixth of the full product.
      const used: number[] = [];
      for (let i = 0; i < d; i++) if (q[i] !== 0) used.push(i);
      const filter = query.filter ? Object.entries(query.filter) : [];
      const top: VectorHit[] = [];
      for (let from = 0; from < u.count && u.dimensions === d; from += SCAN_ROWS) {
        // A large user's scan gives way between slices, so that the search's other work (its
        // SQL round trips, the second lexical hop) goes on beside it. Each slice reads the
        // user's arrays as they are then, and scores and ranks its rows before it gives way: a
        // chain moved by a catch-up in between is at worst left out of this search.
        if (from > 0) await setImmediate();
        const to = Math.min(u.count, from + SCAN_ROWS);
        dotProducts(u.matrix, u.capacity, { from, to }, q, used, dots);
        rankRows(u, { from, to }, dots, qNorm, { ...query, filter }, top);
      }
      return top;
    },
  };
}
