/** Chains at or above this heat move into the long-term graph. */
export const PROMOTE_HEAT = 0.3;
/** Chains below this heat that have been idle for ARCHIVE_IDLE_MS are archived. */
export const ARCHIVE_HEAT = 0.1;
export const ARCHIVE_IDLE_MS = 7 * 24 * 3600 * 1000;
/** Merge a finished chain into an existing one at or above this cosine. */
export const MERGE_THRESHOLD = 0.85;

const STRENGTHEN_FACTOR = 1.5;
const STRENGTHEN_INTERVAL_MS = 12 * 3600 * 1000;

export interface HeatState {
  importance: number;
  density: number;
  /** Recall strength S, 1 for a new chain. */
  recallStrength: number;
  lastAccessAt: Date;
  lastStrengthenedAt: Date | null;
}

/** heat = I_base · exp(−Δt_hours / (24 · S)), I_base = 0.7·importance + 0.3·density. */
export function heat(state: HeatState, now: Date): number {
  const base = 0.7 * state.importance + 0.3 * state.density;
  const hours = Math.max(0, now.getTime() - state.lastAccessAt.getTime()) / 3_600_000;
  return base * Math.exp(-hours / (24 * state.recallStrength));
}

/**
 * A recall: S grows ×1.5, at most once per 12 h, so a burst of reads is one act of remembering
 * rather than a way to pin a chain hot forever.
 */
export function recordAccess(state: HeatState, now: Date): HeatState {
  const strengthen =
    state.lastStrengthenedAt === null ||
    now.getTime() - state.lastStrengthenedAt.getTime() >= STRENGTHEN_INTERVAL_MS;
  return {
    ...state,
    lastAccessAt: now,
    recallStrength: strengthen ? state.recallStrength * STRENGTHEN_FACTOR : state.recallStrength,
    lastStrengthenedAt: strengthen ? now : state.lastStrengthenedAt,
  };
}

export function shouldArchive(state: HeatState, now: Date): boolean {
  return (
    now.getTime() - state.lastAccessAt.getTime() > ARCHIVE_IDLE_MS &&
    heat(state, now) < ARCHIVE_HEAT
  );
}

/** The most similar candidate when it is similar enough to merge into, else undefined. */
export function findMergeTarget<T extends { similarity: number }>(candidates: T[]): T | undefined {
  let best: T | undefined;
  for (const c of candidates) if (!best || c.similarity > best.similarity) best = c;
  return best && best.similarity >= MERGE_THRESHOLD ? best : undefined;
}
