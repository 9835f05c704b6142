import type { ConnectionToken, CredentialStrategy } from "../gateway-types.js";
import { signSigV4 } from "./aws-sigv4.js";
import { signPayload } from "./hmac-payload.js";
import type { OutgoingRequest } from "./outgoing-request.js";

export const defaultApiKeyHeader = "X-API-Key";
export const defaultQueryParam = "api_key";

/** The strategy to use: an explicit one, else the gateway's, else the natural one for the auth type. */
export function resolveStrategy(
  token: ConnectionToken,
  override?: CredentialStrategy,
): CredentialStrategy {
  if (override) return override;
  if (token.strategy?.type) return token.strategy;
  switch (token.auth_type) {
    case "api_key":
      return { type: "api_key" };
    case "basic_auth":
      return { type: "basic_auth" };
    case "oauth2":
      return { type: "oauth2" };
    default:
      throw new Error(
        `connection ${token.connection_id} (${token.auth_type}) has no credential to inject`,
      );
  }
}

/**
 * What a strategy reads of a credential: a gateway token carries it, and so does a credential the
 * broker holds before it is stored (it validates a captured key as the SDKs will inject it).
 */
export type InjectableCredential = Partial<
  Pick<
    ConnectionToken,
    "connection_id" | "access_token" | "token_type" | "api_key" | "username" | "password"
  >
>;

export interface InjectOptions {
  /** Fixed aws_sigv4 signing time; the cross-language conformance vectors pin it. */
  signingDate?: Date;
}

/**
 * Puts the connection's credential into the request. For the static strategies the secret is the
 * captured api_key; aws_sigv4 takes the access key id as username and the secret key as password.
 */
export async function injectCredential(
  request: OutgoingRequest,
  token: InjectableCredential,
  strategy: CredentialStrategy,
  options: InjectOptions = {},
): Promise<OutgoingRequest> {
  const headers = new Headers(request.headers);
  switch (strategy.type) {
    case "oauth2":
      headers.set(
        "authorization",
        `${authScheme(token.token_type)} ${credentialField(token, "access_token")}`,
      );
      return { ...request, headers };
    case "api_key":
      headers.set(
        strategy.header_name || defaultApiKeyHeader,
        `${strategy.header_prefix ?? ""}${credentialField(token, "api_key")}`,
      );
      return { ...request, headers };
    case "basic_auth":
      headers.set(
        "authorization",
        `Basic ${base64(`${credentialField(token, "username")}:${token.password ?? ""}`)}`,
      );
      return { ...request, headers };
    case "query_param": {
      const url = new URL(request.url);
      url.searchParams.set(
        strategy.param_name || defaultQueryParam,
        credentialField(token, "api_key"),
      );
      return { ...request, url };
    }
    case "hmac_payload":
      return signPayload(
        request,
        credentialField(token, "api_key"),
        strategy.header_name || undefined,
        strategy.header_prefix,
      );
    case "aws_sigv4":
      if (!strategy.region || !strategy.service) {
        throw new Error("aws_sigv4 needs the strategy's region and service");
      }
      return signSigV4(request, {
        region: strategy.region,
        service: strategy.service,
        credentials: {
          accessKeyId: credentialField(token, "username"),
          secretAccessKey: credentialField(token, "password"),
        },
        signingDate: options.signingDate,
      });
    default:
      throw new Error(`unknown credential strategy ${(strategy as { type: string }).type}`);
  }
}

function credentialField(
  token: InjectableCredential,
  field: "access_token" | "api_key" | "username" | "password",
): string {
  const value = token[field];
  if (!value) {
    const owner = token.connection_id ? `connection ${token.connection_id}` : "the credential";
    throw new Error(`${owner} has no ${field} for this strategy`);
  }
  return value;
}

/** Token endpoints often say "bearer"; some APIs only accept the scheme as RFC 6750 spells it. */
function authScheme(tokenType: string | undefined): string {
  return !tokenType || tokenType.toLowerCase() === "bearer" ? "Bearer" : tokenType;
}

function base64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}
