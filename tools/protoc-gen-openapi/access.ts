import {
  authenticatorDescription,
  authenticatorSecurity,
  authenticatorSecuritySchemes,
} from "@atrium/kit";
import { exemptMethods as gatewayExemptMethods } from "../../packages/gateway/src/access/key-guard.js";
import type { ErrorResponseName, OperationErrors } from "./error-responses.js";
import type { OpenApiObject } from "./schemas.js";

/**
 * How a service is reached and what its host applies to every call, which the proto does not say:
 * auth lives in each service's start-up (packages/kit/src/auth, the broker's and the gateway's
 * key sets), so it is stated here once per proto package and kept beside those rules.
 */
export interface ServiceAccess {
  /** Default REST port (`<PREFIX>_REST_PORT`). */
  restPort: number;
  /** `info.description` paragraph on authentication, mTLS included (OpenAPI 3.0 has no type for it). */
  authentication: string;
  securitySchemes: Readonly<Record<string, OpenApiObject>>;
  /** Alternatives, any one of which is enough; `{}` means the default deployment needs none. */
  security: OpenApiObject[];
  /** RPC names reachable without credentials. */
  exemptMethods?: ReadonlySet<string>;
  /** Failures every operation of the service can give (besides 400, 404 and 413). */
  commonErrors: readonly ErrorResponseName[];
  particularErrors: OperationErrors;
}

const apiKeyHeader = authenticatorSecuritySchemes.ApiKey;

const brokerToken: readonly ErrorResponseName[] = ["AttentionRequired", "ConnectionRevoked"];

export const accessByPackage: Record<string, ServiceAccess> = {
  "memory.v1": {
    restPort: 8080,
    authentication: authenticatorDescription("ATRIUM_MEMORY"),
    securitySchemes: authenticatorSecuritySchemes,
    security: authenticatorSecurity,
    commonErrors: ["Unauthorized", "Unavailable"],
    particularErrors: {
      "memory.v1.MemoryService.StoreEvent": ["PreconditionFailed"],
    },
  },
  "broker.v1": {
    restPort: 8081,
    authentication:
      "Every request needs one of the broker's API keys (`API_KEY`, `API_KEYS`, or the files " +
      "`API_KEY_FILE` / `API_KEYS_FILE`, re-read for rotation) as `X-API-Key`; a missing or " +
      "wrong key answers 401. Callers outside `ALLOWED_CIDRS` get 403 `ip_not_allowed`. " +
      "Over TLS the same rules hold; the broker does not ask for client certificates.",
    securitySchemes: { ApiKey: apiKeyHeader },
    security: [{ ApiKey: [] }],
    commonErrors: ["Unauthorized", "Forbidden", "Unavailable"],
    particularErrors: {
      "broker.v1.BrokerService.CreateProvider": ["AlreadyExists"],
      "broker.v1.BrokerService.ReplaceProvider": ["PreconditionFailed"],
      "broker.v1.BrokerService.UpdateProvider": ["PreconditionFailed"],
      "broker.v1.BrokerService.DeleteProvider": ["PreconditionFailed"],
      "broker.v1.BrokerService.GetCaptureSchema": ["PreconditionFailed"],
      "broker.v1.BrokerService.CaptureCredential": ["NotFound", "Unprocessable"],
      "broker.v1.BrokerService.GetConnectionToken": brokerToken,
      "broker.v1.BrokerService.RefreshConnection": brokerToken,
      "broker.v1.BrokerService.CreateAgent": ["AlreadyExists"],
      "broker.v1.BrokerService.CreateAgentSession": ["NotFound", "PreconditionFailed"],
      "broker.v1.BrokerService.CreateWebhook": ["AlreadyExists"],
      "broker.v1.BrokerService.UpdateWebhook": ["AlreadyExists"],
      "broker.v1.BrokerService.RedeliverWebhook": ["PreconditionFailed"],
    },
  },
  "gateway.v1": {
    restPort: 8082,
    authentication:
      "Inbound keys are off by default (the gateway warns at start). With " +
      "`GATEWAY_REQUIRE_API_KEY=true` every operation except the OAuth callback and static " +
      "capture needs `X-API-Key` matching one of `GATEWAY_API_KEYS` (or the key files): a " +
      "missing key answers 401, a wrong one 403. Callers outside `ALLOWED_CIDRS` get 403 " +
      "`ip_not_allowed`. The gateway reaches the broker with its own `BROKER_API_KEY`, so a " +
      "broker that refuses it answers 503, never 401.",
    securitySchemes: { ApiKey: apiKeyHeader },
    security: [{ ApiKey: [] }, {}],
    exemptMethods: gatewayExemptMethods,
    commonErrors: ["Unauthorized", "Forbidden", "Unavailable"],
    particularErrors: {
      "gateway.v1.GatewayService.GetToken": brokerToken,
      "gateway.v1.GatewayService.RefreshConnection": brokerToken,
      "gateway.v1.GatewayService.CaptureCredential": ["NotFound", "Unprocessable"],
      "gateway.v1.GatewayService.GetCaptureSchema": ["NotFound", "PreconditionFailed"],
      "gateway.v1.GatewayService.CreateAgent": ["AlreadyExists"],
      "gateway.v1.GatewayService.CreateAgentSession": ["NotFound", "PreconditionFailed"],
      "gateway.v1.GatewayService.CreateWebhook": ["AlreadyExists", "PreconditionFailed"],
      "gateway.v1.GatewayService.ListWebhooks": ["PreconditionFailed"],
      "gateway.v1.GatewayService.GetWebhook": ["PreconditionFailed"],
      "gateway.v1.GatewayService.UpdateWebhook": ["AlreadyExists", "PreconditionFailed"],
      "gateway.v1.GatewayService.DeleteWebhook": ["PreconditionFailed"],
      "gateway.v1.GatewayService.ListWebhookDeliveries": ["PreconditionFailed"],
      "gateway.v1.GatewayService.RotateWebhookSecret": ["PreconditionFailed"],
      "gateway.v1.GatewayService.RedeliverWebhook": ["PreconditionFailed"],
    },
  },
};
