import { type MigrationLogger, type RunMigrationsOptions, runMigrations } from "./migrator.js";
import type { Sql } from "./sql.js";

export interface MigrateAtBootOptions extends RunMigrationsOptions {
  sql: Sql;
  /** `AUTO_MIGRATE`; false leaves the schema to an operator who migrates out of band. */
  enabled: boolean;
  logger: MigrationLogger;
}

/** What a service runs at start-up: its migrations, unless AUTO_MIGRATE=false. */
export async function migrateAtBoot(options: MigrateAtBootOptions): Promise<string[]> {
  const { sql, namespace, enabled, logger } = options;
  if (!enabled) {
    logger.info({ namespace }, "AUTO_MIGRATE=false: migrations not applied");
    return [];
  }
  const applied = await runMigrations(sql, options);
  logger.info({ namespace, applied: applied.length }, "schema is up to date");
  return applied;
}
