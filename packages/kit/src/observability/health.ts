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
 * response names failing checks without their error text. A check's change of state is logged
 * once (failing, then recovered), not on every probe: an orchestrator probes every few seconds
 * through an outage, and a line per probe would bury everything else.
 */
export function createHealthReporter(options: HealthReporterOptions): () => Promise<HealthReport> {
  const { service, checks = {}, logger, checkTimeoutMs = 800 } = options;
  const failing = new Set<string>();
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
      const name = names[i];
      if (outcome.status === "fulfilled") {
        report.checks[name] = "ok";
        if (failing.delete(name)) logger.info({ check: name }, "health check passing again");
        return;
      }
      report.status = "degraded";
      report.checks[name] = "failing";
      if (!failing.has(name)) {
        failing.add(name);
        logger.warn({ check: name, err: outcome.reason }, "health check failing");
      }
    });
    return report;
  };
}
