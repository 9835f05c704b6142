/**
 * Whether a statement failed on a unique constraint (SQLSTATE 23505), which PostgreSQL and
 * PGlite both report with that code: the row a caller meant to create is already there.
 */
export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === "object" && error !== null && (error as { code?: string }).code === "23505"
  );
}
