/**
 * Freezes a handler's result all the way down. The REST transport writes the JSON of a frozen
 * result once and reuses it every time the same object is returned, so a handler that serves an
 * unchanged value from a cache should return it frozen. Byte arrays cannot be frozen: a result
 * holding bytes must not have them changed afterwards.
 */
export function freezeResult<T>(value: T): T {
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return value;
  Object.freeze(value);
  for (const item of Object.values(value)) freezeResult(item);
  return value;
}
