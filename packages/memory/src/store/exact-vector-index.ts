import type { Sql } from "@atrium/kit";
import type { VectorHit, VectorQuery } from "./vector-search.js";

interface UserVectors {
  version: number;
  dimensions: number;
  ids: string[];
  agentIds: string[];
  metadata: Record<string, string>[];
  /** Row-major, `dimensions` floats per chain; rows of removed chains are swapped out. */
  matrix: Float32Array;
  norms: Float32Array;
  rowById: Map<string, number>;
  count: number;
}

interface ChangedRow {
  id: string;
  agent_id: string;
  status: string;
  metadata: Record<string, string>;
  embedding: number[];
}

/** Dot product of q with the row at `base`; four accumulators let the JIT pipeline the loop. */
function dotAt(m: Float32Array, base: number, q: Float32Array, d: number): number {
  let a = 0;
  let b = 0;
  let c = 0;
  let e = 0;
  let i = 0;
  for (; i + 3 < d; i += 4) {
    a += m[base + i] * q[i];
    b += m[base + i + 1] * q[i + 1];
    c += m[base + i + 2] * q[i + 2];
    e += m[base + i + 3] * q[i + 3];
  }
  for (; i < d; i++) a += m[base + i] * q[i];
  return a + b + c + e;
}

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

  function ensureCapacity(u: UserVectors, dimensions: number, rows: number) {
    if (u.dimensions !== dimensions && u.count === 0) u.dimensions = dimensions;
    if (u.matrix.length >= rows * u.dimensions) return;
    const capacity = Math.max(
      rows,
      Math.ceil((u.matrix.length / Math.max(1, u.dimensions)) * 1.5),
      64,
    );
    const matrix = new Float32Array(capacity * u.dimensions);
    matrix.set(u.matrix.subarray(0, u.count * u.dimensions));
    const norms = new Float32Array(capacity);
    norms.set(u.norms.subarray(0, u.count));
    u.matrix = matrix;
    u.norms = norms;
  }

  function removeRow(u: UserVectors, id: string) {
    const row = u.rowById.get(id);
    if (row === undefined) return;
    const last = u.count - 1;
    if (row !== last) {
      const d = u.dimensions;
      u.matrix.copyWithin(row * d, last * d, last * d + d);
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
    ensureCapacity(u, r.embedding.length, u.count + 1);
    // A chain whose vector has another size (a model change) cannot be compared: drop it.
    if (r.embedding.length !== u.dimensions) {
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
    const d = u.dimensions;
    let norm = 0;
    for (let i = 0; i < d; i++) {
      const x = Number(r.embedding[i]);
      u.matrix[row * d + i] = x;
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
      `SELECT id, agent_id, status, metadata, embedding FROM memory_chains
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
      const filter = query.filter ? Object.entries(query.filter) : [];
      // Top-k kept sorted best first; k is small (≤ 100), so insertion beats a heap.
      const top: VectorHit[] = [];
      for (let row = 0; row < u.count; row++) {
        if (query.agentId !== undefined && u.agentIds[row] !== query.agentId) continue;
        if (filter.length > 0 && !filter.every(([k, v]) => u.metadata[row][k] === v)) continue;
        const dot = dotAt(u.matrix, row * d, q, d);
        const denominator = u.norms[row] * qNorm;
        const similarity = denominator === 0 ? 0 : dot / denominator;
        const id = u.ids[row];
        if (top.length === query.limit) {
          const worst = top[top.length - 1];
          if (
            similarity < worst.similarity ||
            (similarity === worst.similarity && id > worst.chainId)
          )
            continue;
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
      return top;
    },
  };
}
