import { createHash } from "node:crypto";
import { resolve } from "node:path";

export interface DeploymentRedisPrefixOptions {
  /** `DATABASE_URL`: its server, database and search_path name the deployment. */
  databaseUrl?: string;
  /** Without a database URL, the embedded database's directory names it. */
  dataDir: string;
}

/**
 * The Redis key prefix of one deployment, so that deployments sharing a Redis never take each
 * other's queued jobs nor read each other's cache entries: both name rows of the deployment's
 * own database, which another deployment does not hold. Derived from where the data lives (never
 * from credentials, which rotate): the PostgreSQL host, port, database and `options` (the
 * search_path that picks a schema), or the embedded database's directory. The hash tag keeps
 * every key of a queue in one Redis Cluster slot.
 */
export function deploymentRedisPrefix(options: DeploymentRedisPrefixOptions): string {
  let identity: string;
  if (options.databaseUrl) {
    const url = new URL(options.databaseUrl);
    const host = url.hostname.toLowerCase();
    const port = url.port || "5432";
    const database = decodeURIComponent(url.pathname.replace(/^\//, ""));
    const searchPath = url.searchParams.get("options") ?? "";
    identity = `postgres ${host}:${port}/${database} ${searchPath}`;
  } else identity = `embedded ${resolve(options.dataDir)}`;
  const digest = createHash("sha256").update(identity).digest("hex").slice(0, 16);
  return `{atrium:${digest}}`;
}
