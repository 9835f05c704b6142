import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";

export type Transport = "rest" | "grpc";

export interface RequestSample {
  transport: Transport;
  /** RPC name (`memory.v1.MemoryService/CreateSession`) or REST route (`POST /api/v1/sessions`). */
  operation: string;
  /** HTTP status code for REST, gRPC code name for gRPC. */
  status: string;
  durationSeconds: number;
}

export interface RequestMetrics {
  readonly registry: Registry;
  observe(sample: RequestSample): void;
}

export interface RequestMetricsOptions {
  service: string;
}

/** A registry of its own per host, so several services in one process never share series. */
export function createRequestMetrics(options: RequestMetricsOptions): RequestMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: options.service });
  collectDefaultMetrics({ register: registry });
  const labelNames = ["transport", "operation", "status"] as const;
  const requests = new Counter({
    name: "atrium_requests_total",
    help: "Requests handled, by transport, operation and status.",
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "atrium_request_duration_seconds",
    help: "Request latency in seconds, by transport, operation and status.",
    labelNames,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return {
    registry,
    observe({ transport, operation, status, durationSeconds }) {
      const labels = { transport, operation, status };
      requests.inc(labels);
      duration.observe(labels, durationSeconds);
    },
  };
}
