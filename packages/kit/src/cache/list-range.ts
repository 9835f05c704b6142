/**
 * Resolves an inclusive LRANGE/LTRIM index pair against a list length the way Redis does:
 * negative indexes count from the end, out-of-range indexes are clamped, and an empty range
 * comes back as `undefined`.
 */
export function resolveListRange(
  length: number,
  start: number,
  stop: number,
): { start: number; stop: number } | undefined {
  if (!Number.isInteger(start) || !Number.isInteger(stop)) {
    throw new RangeError("ERR value is not an integer or out of range");
  }
  const from = Math.max(start < 0 ? length + start : start, 0);
  const to = Math.min(stop < 0 ? length + stop : stop, length - 1);
  if (from > to || from >= length) return undefined;
  return { start: from, stop: to };
}

/** A capped window must keep at least one element: LTRIM 0 -1 would keep everything instead. */
export function assertKeep(keep: number): void {
  if (!Number.isInteger(keep) || keep < 1) {
    throw new RangeError(`keep must be a whole number of at least 1, got ${keep}`);
  }
}
