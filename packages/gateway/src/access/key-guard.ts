import { AtriumError, Code } from "@atrium/kit";
import type { DescService } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { ApiKeyStore, KeyVerdict } from "./api-key-store.js";

/** Reachable without a key: the OAuth redirect (a browser) and static capture (a form). */
export const exemptMethods = new Set([
  "CompleteAuthorization",
  "GetCaptureSchema",
  "CaptureCredential",
]);

/** The same exemptions as REST paths, plus the probes. */
export const exemptPaths = new Set([
  "/health",
  "/metrics",
  "/auth/callback",
  "/v1/capture-schema",
  "/v1/capture-credential",
]);

/** Missing 401, wrong 403; undefined when the key is accepted. */
export function keyRejection(verdict: KeyVerdict): AtriumError | undefined {
  if (verdict === "ok") return undefined;
  return verdict === "missing"
    ? new AtriumError(Code.Unauthenticated, "X-API-Key is required")
    : new AtriumError(Code.PermissionDenied, "X-API-Key is not valid");
}

type Handler = (request: never, context: HandlerContext) => unknown;

export interface KeyGuardOptions {
  keys: ApiKeyStore;
  onRejected: (method: string, verdict: KeyVerdict) => void;
}

/**
 * Wraps every RPC of an implementation with the inbound key check. It runs inside the handler,
 * so gRPC (metadata x-api-key) and REST (header X-API-Key, through the transcoder) get exactly the
 * same rule: missing 401, wrong 403.
 */
export function guardWithApiKeys<T extends Record<string, Handler>>(
  service: DescService,
  implementation: T,
  options: KeyGuardOptions,
): T {
  const guarded: Record<string, Handler> = {};
  for (const method of service.methods) {
    const handler = implementation[method.localName];
    if (handler === undefined) continue;
    if (exemptMethods.has(method.name)) {
      guarded[method.localName] = handler;
      continue;
    }
    guarded[method.localName] = (request, context) => {
      const verdict = options.keys.check(context.requestHeader.get("x-api-key"));
      const rejection = keyRejection(verdict);
      if (rejection) {
        options.onRejected(method.name, verdict);
        throw rejection;
      }
      return handler(request, context);
    };
  }
  return guarded as T;
}
