import { Counter, type Registry } from "prom-client";

export interface BrokerMetrics {
  answered(method: string, transport: "grpc" | "rest"): void;
  fellBack(method: string): void;
  /** Adds the counters to the host's /metrics registry once it exists. */
  register(registry: Registry): void;
}

/** How the broker was reached: a rising fallback count means its gRPC port is unhealthy. */
export function createBrokerMetrics(): BrokerMetrics {
  const calls = new Counter({
    name: "atrium_gateway_broker_calls_total",
    help: "Broker calls answered, by method and the transport that answered.",
    labelNames: ["method", "transport"] as const,
    registers: [],
  });
  const fallbacks = new Counter({
    name: "atrium_gateway_broker_fallbacks_total",
    help: "Broker calls moved from gRPC to REST after a transport failure, by method.",
    labelNames: ["method"] as const,
    registers: [],
  });
  return {
    answered: (method, transport) => calls.inc({ method, transport }),
    fellBack: (method) => fallbacks.inc({ method }),
    register(registry) {
      registry.registerMetric(calls);
      registry.registerMetric(fallbacks);
    },
  };
}
