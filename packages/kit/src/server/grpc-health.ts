import { setTimeout as sleep } from "node:timers/promises";
import { grpcHealthV1 } from "@atrium/api";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { HealthReport } from "../observability/health.js";

const { HealthCheckResponse_ServingStatus: ServingStatus } = grpcHealthV1;

export interface GrpcHealthOptions {
  /** The service's own health report, the one REST's `/health` answers with. */
  report: () => Promise<HealthReport>;
  /** Fully qualified names a client may ask about; `""` (the whole server) is always known. */
  serviceNames: readonly string[];
  /** How often an open Watch re-reads the report; default 5 s, a probe's usual period. */
  watchIntervalMs?: number;
}

export interface GrpcHealth {
  implementation: ServiceImpl<typeof grpcHealthV1.Health>;
  /** Open Watches send NOT_SERVING and end: the server is draining. */
  drain(): void;
}

/**
 * grpc.health.v1.Health (https://github.com/grpc/grpc/blob/master/doc/health-checking.md) over the
 * service's own health report: SERVING when every check passes, NOT_SERVING when the report is
 * degraded or the server drains. Every service of the process shares one status, as it shares one
 * process and one set of stores.
 */
export function createGrpcHealth(options: GrpcHealthOptions): GrpcHealth {
  const known = new Set(["", ...options.serviceNames]);
  const intervalMs = options.watchIntervalMs ?? 5000;
  const draining = new AbortController();

  const currentStatus = async () => {
    if (draining.signal.aborted) return ServingStatus.NOT_SERVING;
    const { status } = await options.report();
    return status === "healthy" ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  };
  const answer = (status: grpcHealthV1.HealthCheckResponse_ServingStatus) =>
    create(grpcHealthV1.HealthCheckResponseSchema, { status });

  return {
    drain: () => draining.abort(),
    implementation: {
      async check(request) {
        if (!known.has(request.service)) {
          throw new ConnectError(
            `unknown service ${JSON.stringify(request.service)}`,
            Code.NotFound,
          );
        }
        return answer(await currentStatus());
      },

      async list() {
        const status = await currentStatus();
        return create(grpcHealthV1.HealthListResponseSchema, {
          statuses: Object.fromEntries([...known].map((name) => [name, answer(status)])),
        });
      },

      async *watch(request, context) {
        // The protocol keeps the call open for an unknown name, in case it becomes known.
        if (!known.has(request.service)) {
          yield answer(ServingStatus.SERVICE_UNKNOWN);
          await sleep(2 ** 31 - 1, undefined, {
            signal: AbortSignal.any([context.signal, draining.signal]),
          }).catch(() => undefined);
          return;
        }
        const stop = AbortSignal.any([context.signal, draining.signal]);
        let last: grpcHealthV1.HealthCheckResponse_ServingStatus | undefined;
        while (!context.signal.aborted) {
          const status = await currentStatus();
          if (status !== last) {
            last = status;
            yield answer(status);
          }
          if (stop.aborted) return;
          await sleep(intervalMs, undefined, { signal: stop }).catch(() => undefined);
        }
      },
    },
  };
}
