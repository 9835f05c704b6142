import { gatewayV1 } from "@atrium/api";
import {
  type ApiKeySet,
  type Authenticator,
  type AuthRequest,
  apiKeyAuthenticator,
  Code,
  procedureName,
} from "@atrium/kit";

/**
 * Reachable without a key (the spec's exempt routes): the OAuth redirect (a browser) and static
 * capture (a form). Named as RPCs, so the rule is the same on gRPC and on their REST routes.
 */
export const exemptMethods: ReadonlySet<string> = new Set([
  "CompleteAuthorization",
  "GetCaptureSchema",
  "CaptureCredential",
]);

export interface GatewayKeyCheckOptions {
  keys: ApiKeySet;
  /** REST paths other parts of the gateway serve without a key (the console's files). */
  openPaths: { paths: string[]; pathPrefixes: string[] };
  /** Requests whose credential another part of the gateway checks (MCP's OAuth tokens). */
  checkedElsewhere?: (request: AuthRequest) => boolean;
}

/** A browser's CORS preflight: it never carries credentials, and is answered before routing. */
const isPreflight = (request: AuthRequest) =>
  request.method === "OPTIONS" && request.headers.has("access-control-request-method");

/**
 * The gateway's one inbound key check, run by the service host once per request on both
 * transports: missing 401, wrong 403 (the gateway's contract).
 */
export function createGatewayKeyCheck(options: GatewayKeyCheckOptions): Authenticator {
  const { checkedElsewhere } = options;
  return apiKeyAuthenticator({
    keys: options.keys,
    wrongKey: Code.PermissionDenied,
    exempt: {
      procedures: [...exemptMethods].map((name) => procedureName(gatewayV1.GatewayService, name)),
      paths: options.openPaths.paths,
      pathPrefixes: options.openPaths.pathPrefixes,
      when: (request) => isPreflight(request) || (checkedElsewhere?.(request) ?? false),
    },
  });
}
