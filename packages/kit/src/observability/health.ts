import type { Logger } from "pino";

export type HealthCheck = () => Promise<void>;

export interface HealthReport {
  status: "healthy" | "degraded";
  service: string;
  timestamp: string;
  checks: Record<string, "ok" | "failing">;
}

export interface HealthReporterOptions {
  service: string;
  checks?: Record<string, HealthCheck>;
  logger: Logger;
  /**
   * A check that has not answered by then counts as failing, so a hung store cannot hang the
   * probe; default 800 ms, so the probe answers within a second.
   */
  checkTimeoutMs?: number;
}

function withTimeout(check: HealthCheck, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([check(), timeout]).finally(() => clearTimeout(timer));
}

/**
 * Liveness report. Failure details go to the log only: the route is unauthenticated, so the
 * response names failing checks without their error text.
 */
export function createHealthReporter(options: HealthReporterOptions): () => Promise<HealthReport> {
  const { service, checks = {}, logger, checkTimeoutMs = 800 } = options;
  return async () => {
    const names = Object.keys(checks);
    const outcomes = await Promise.allSettled(
      names.map((name) => withTimeout(checks[name], checkTimeoutMs)),
    );
    const report: HealthReport = {
      status: "healthy",
      service,
      timestamp: new Date().toISOString(),
      checks: {},
    };
    outcomes.forEach((outcome, i) => {
      if (outcome.status === "fulfilled") {
        report.checks[names[i]] = "ok";
        return;
      }
      report.status = "degraded";
      report.checks[names[i]] = "failing";
      logger.warn({ check: names[i], err: outcome.reason }, "health check failing");
    });
    return report;
  };
}
