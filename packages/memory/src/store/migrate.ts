import { fileURLToPath } from "node:url";
import { type MigrationLogger, runMigrations, type Sql } from "@atrium/kit";

/** packages/memory/migrations, from src/store and from dist/store alike. */
export const migrationsDir = fileURLToPath(new URL("../../migrations", import.meta.url));

export function migrateMemory(sql: Sql, logger?: MigrationLogger): Promise<string[]> {
  return runMigrations(sql, { dir: migrationsDir, namespace: "memory", logger });
}
