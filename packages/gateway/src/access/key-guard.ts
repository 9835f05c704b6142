import { gatewayV1 } from "@atrium/api";
import {
  type ApiKeySet,
  apiKeyRejection,
  Code,
  type KeyVerdict,
  readHttpBindings,
} from "@atrium/kit";
import type { DescService } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";

/**
 * Reachable without a key (the spec's exempt routes): the OAuth redirect (a browser) and static
 * capture (a form). Named once, as RPCs; their REST paths come from the proto's http rules.
 */
export const exemptMethods = new Set([
  "CompleteAuthorization",
  "GetCaptureSchema",
  "CaptureCredential",
]);

/** The exempt RPCs' REST paths, plus the probes. */
export const exemptPaths = new Set([
  "/health",
  "/metrics",
  ...gatewayV1.GatewayService.methods
    .filter((method) => exemptMethods.has(method.name))
    .flatMap((method) => readHttpBindings(method).map((binding) => binding.path)),
]);

/** The gateway's contract: missing 401, wrong 403; undefined when the key is accepted. */
export const keyRejection = (verdict: KeyVerdict) =>
  apiKeyRejection(verdict, Code.PermissionDenied);

type Handler = (request: never, context: HandlerContext) => unknown;

export interface KeyGuardOptions {
  keys: ApiKeySet;
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
