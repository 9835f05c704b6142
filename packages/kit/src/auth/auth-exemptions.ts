import type { DescService } from "@bufbuild/protobuf";
import type { AuthRequest } from "./identity.js";

/**
 * What a service declares reachable without credentials. The host's probes (/health, /metrics,
 * gRPC health and reflection) are open everywhere and need no declaration.
 */
export interface AuthExemptions {
  /** RPCs by full name (see `procedureName`): open on gRPC and on their REST routes alike. */
  procedures?: Iterable<string>;
  /** REST paths open as they are (no template: a route with variables is named as its RPC). */
  paths?: Iterable<string>;
  /** REST path prefixes (static files). */
  pathPrefixes?: Iterable<string>;
  /** Anything the lists cannot say (a CORS preflight, a request carrying another credential). */
  when?: (request: AuthRequest) => boolean;
}

/** `/package.Service/Method`, the procedure of an RPC on both transports. */
export function procedureName(service: DescService, method: string): string {
  if (!service.methods.some((m) => m.name === method)) {
    throw new Error(`${service.typeName} has no method ${method}`);
  }
  return `/${service.typeName}/${method}`;
}

/** A predicate over requests, built once from a service's declaration. */
export function createExemption(exemptions: AuthExemptions): (request: AuthRequest) => boolean {
  const procedures = new Set(exemptions.procedures ?? []);
  const paths = new Set(exemptions.paths ?? []);
  const prefixes = [...(exemptions.pathPrefixes ?? [])];
  return (request) => {
    if (request.procedure !== undefined && procedures.has(request.procedure)) return true;
    const path = request.path;
    if (path !== undefined && (paths.has(path) || prefixes.some((p) => path.startsWith(p)))) {
      return true;
    }
    return exemptions.when?.(request) ?? false;
  };
}
