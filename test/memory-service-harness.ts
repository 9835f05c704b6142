import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryV1 } from "@atrium/api";
import { createLogger, type RunningService } from "@atrium/kit";
import { startMemoryService } from "@atrium/memory";
import { fromJson, type JsonObject, type JsonValue, toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

/**
 * Test support: the real memory service on ephemeral ports, and one calling convention for both
 * transports. Requests and responses are proto3 JSON with proto field names (what REST speaks);
 * the gRPC side converts them with the generated schemas, so one test body runs on both.
 */

// biome-ignore lint/suspicious/noExplicitAny: proto3 JSON of any shape, asserted on by the tests
export type Json = any;

export type MethodName = keyof typeof memoryV1.MemoryService.method;

export type CallResult =
  | { ok: true; body: Record<string, Json> }
  | { ok: false; code: string; status?: number; message: string };

export interface Transport {
  name: "rest" | "grpc";
  call(
    method: MethodName,
    request?: JsonObject,
    headers?: Record<string, string>,
  ): Promise<CallResult>;
}

const routes: Record<
  MethodName,
  (r: JsonObject) => { method: string; path: string; body?: JsonObject }
> = {
  createSession: (r) => ({ method: "POST", path: "/api/v1/sessions", body: r }),
  getSession: (r) => ({ method: "GET", path: `/api/v1/sessions/${r.session_id}` }),
  deleteSession: (r) => ({ method: "DELETE", path: `/api/v1/sessions/${r.session_id}` }),
  storeInteraction: ({ session_id, ...r }) => ({
    method: "POST",
    path: `/api/v1/sessions/${session_id}/interactions`,
    body: r,
  }),
  storeEvent: ({ session_id, ...r }) => ({
    method: "POST",
    path: `/api/v1/sessions/${session_id}/events`,
    body: r,
  }),
  getContext: ({ session_id, ...r }) => {
    const query = new URLSearchParams(
      Object.entries(r).map(([k, v]): [string, string] => [k, String(v)]),
    ).toString();
    return {
      method: "GET",
      path: `/api/v1/sessions/${session_id}/context${query ? `?${query}` : ""}`,
    };
  },
  searchMemory: ({ session_id, ...r }) => ({
    method: "POST",
    path: `/api/v1/sessions/${session_id}/context/search`,
    body: r,
  }),
  analyzeTopics: (r) => ({
    method: "GET",
    path: `/api/v1/sessions/${r.session_id}/analysis/topics`,
  }),
  getHeatMetrics: (r) => ({
    method: "GET",
    path: `/api/v1/sessions/${r.session_id}/analysis/heat`,
  }),
  getSegments: (r) => ({ method: "GET", path: `/api/v1/sessions/${r.session_id}/segments` }),
  forget: ({ session_id, ...r }) => ({
    method: "POST",
    path: `/api/v1/sessions/${session_id}/forget`,
    body: r,
  }),
  healthCheck: () => ({ method: "GET", path: "/api/v1/health" }),
  triggerGraphAnalytics: () => ({
    method: "POST",
    path: "/api/v1/admin/analytics/trigger",
    body: {},
  }),
};

export function restTransport(baseUrl: string): Transport {
  return {
    name: "rest",
    async call(method, request = {}, headers = {}) {
      const route = routes[method](request);
      const response = await fetch(`${baseUrl}${route.path}`, {
        method: route.method,
        headers: { ...(route.body ? { "content-type": "application/json" } : {}), ...headers },
        body: route.body ? JSON.stringify(route.body) : undefined,
      });
      const body = (await response.json()) as Record<string, Json>;
      if (response.ok) return { ok: true, body };
      return { ok: false, code: body.code, status: response.status, message: body.message };
    },
  };
}

export function grpcTransport(baseUrl: string): Transport {
  const transport = createGrpcTransport({ baseUrl });
  const client = createClient(memoryV1.MemoryService, transport) as unknown as Record<
    MethodName,
    (request: unknown, options: { headers: Record<string, string> }) => Promise<unknown>
  >;
  return {
    name: "grpc",
    async call(method, request = {}, headers = {}) {
      const desc = memoryV1.MemoryService.method[method];
      try {
        const response = await client[method](fromJson(desc.input, request), { headers });
        const body = toJson(desc.output, response as never, {
          alwaysEmitImplicit: true,
          useProtoFieldName: true,
        });
        return { ok: true, body: body as Record<string, Json> };
      } catch (error) {
        const e = ConnectError.from(error);
        return { ok: false, code: Code[e.code], message: e.rawMessage };
      }
    },
  };
}

export interface TestService {
  service: RunningService;
  transports: Transport[];
  dataDir: string;
  stop(): Promise<void>;
}

/** The real service: PGlite under a temporary data dir and in-process stores unless `env` says otherwise. */
export async function startTestService(env: Record<string, string> = {}): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), "atrium-memory-"));
  const service = await startMemoryService({
    env: {
      MEMORY_HOST: "127.0.0.1",
      MEMORY_REST_PORT: "0",
      MEMORY_GRPC_PORT: "0",
      ATRIUM_DATA_DIR: dataDir,
      MEMORY_PROMOTER_INTERVAL: "0s",
      ...env,
    },
    logger: createLogger({ name: "memory", level: "silent" }),
  });
  const grpcUrl = service.urls.grpc;
  if (!grpcUrl) throw new Error("gRPC did not start");
  return {
    service,
    dataDir,
    transports: [restTransport(service.urls.rest), grpcTransport(grpcUrl)],
    async stop() {
      await service.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The body of a call that must succeed. */
export async function ok(
  transport: Transport,
  method: MethodName,
  request?: JsonObject,
  headers?: Record<string, string>,
) {
  const result = await transport.call(method, request, headers);
  if (!result.ok)
    throw new Error(`${transport.name} ${method} failed: ${result.code} ${result.message}`);
  return result.body;
}

export const httpStatus: Record<string, number> = {
  InvalidArgument: 400,
  Unauthenticated: 401,
  NotFound: 404,
  FailedPrecondition: 412,
  Unimplemented: 501,
  Internal: 500,
};

export type { JsonObject, JsonValue };
