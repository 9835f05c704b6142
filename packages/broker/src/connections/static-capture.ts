import {
  invalidArgument,
  invalidCredentials,
  providerNotValidatable,
  providerUnavailable,
} from "@atrium/kit";
import { injectCredential, type CredentialStrategy as Presentation } from "@atrium/sdk";
import type { CallerContext } from "../audit/audit-log.js";
import type { BrokerContext } from "../broker-context.js";
import type { ProviderRecord } from "../providers/provider-store.js";
import type { ConnectionRecord, Credential } from "./connection-record.js";
import { credentialStrategy } from "./credential-strategy.js";
import { storeConnection } from "./store-connection.js";

export interface StaticCaptureRequest {
  providerId: string;
  workspaceId: string;
  apiKey?: string;
  username?: string;
  password?: string;
}

/**
 * Longest static credential field the broker presents to a provider, in bytes. The field becomes
 * a header or query value there, and common servers refuse a header section over 8 KiB (431)
 * before the provider's code runs; no real API key or password comes near this.
 */
export const maxCredentialFieldBytes = 4096;

/** An API key or username and password, stored once the provider has accepted it. */
export async function captureStatic(
  ctx: BrokerContext,
  request: StaticCaptureRequest,
  caller: CallerContext,
): Promise<ConnectionRecord> {
  if (!request.workspaceId) throw invalidArgument("workspace_id is required");
  const provider = await ctx.providers.get(request.providerId);
  let credential: Credential;
  if (provider.auth_type === "api_key") {
    if (!request.apiKey) throw invalidArgument("api_key is required");
    credential = { api_key: request.apiKey };
  } else if (provider.auth_type === "basic_auth") {
    if (!request.username || !request.password)
      throw invalidArgument("username and password are required");
    credential = { username: request.username, password: request.password };
  } else {
    throw invalidArgument(
      `provider ${provider.id} (${provider.auth_type}) takes no static credential`,
    );
  }
  checkCredentialSizes(credential);
  // Fail closed: nothing is stored unless the provider accepted the credential.
  await validateStatic(provider, credential);
  return storeConnection(
    ctx,
    {
      provider,
      workspaceId: request.workspaceId,
      credential,
      scopes: [],
      subject: request.username ?? "",
      method: "static",
    },
    caller,
  );
}

function checkCredentialSizes(credential: Credential) {
  for (const [name, value] of Object.entries(credential)) {
    if (typeof value === "string" && Buffer.byteLength(value) > maxCredentialFieldBytes) {
      throw invalidArgument(`${name} is longer than ${maxCredentialFieldBytes} bytes`);
    }
  }
}

async function validateStatic(provider: ProviderRecord, credential: Credential): Promise<void> {
  const endpoint = provider.user_info_endpoint || provider.api_base_url;
  if (!endpoint) throw providerNotValidatable({ provider_id: provider.id });
  const url = new URL(endpoint);
  let response: Response;
  try {
    // Presented by the SDKs' own injection, so a key that passes here works when injected. Inside
    // the try: a header that cannot be sent fails in Headers as it would in fetch.
    const request = await injectCredential(
      { url, method: "GET", headers: new Headers({ accept: "application/json" }), body: undefined },
      credential,
      presentation(provider),
    );
    response = await fetch(request.url, {
      headers: request.headers,
      signal: AbortSignal.timeout(10_000),
      redirect: "manual",
    });
    await response.body?.cancel();
  } catch {
    throw providerUnavailable({
      detail: `provider ${provider.name} could not be reached to validate the credential`,
    });
  }
  if (response.status === 401 || response.status === 403) {
    throw invalidCredentials({ provider_status: String(response.status) });
  }
  // The request was too large for the provider only because of what the caller sent: the
  // caller's fault, not an outage of the provider.
  if (response.status === 413 || response.status === 414 || response.status === 431) {
    throw invalidArgument(
      `provider ${provider.name} refused the credential as too large (answered ${response.status})`,
    );
  }
  if (!response.ok) {
    throw providerUnavailable({
      detail: `provider ${provider.name} answered ${response.status} while validating`,
    });
  }
}

/**
 * How a captured credential is presented to be validated: HTTP Basic for a basic_auth provider,
 * else in the provider's query parameter or header. A signing strategy (hmac_payload, aws_sigv4)
 * signs requests, not this check: its key is presented in the header, as an api_key is.
 */
function presentation(provider: ProviderRecord): Presentation {
  if (provider.auth_type === "basic_auth") return { type: "basic_auth" };
  const strategy = credentialStrategy(provider.auth_type, provider.params);
  if (strategy.type === "query_param") {
    return { type: "query_param", param_name: strategy.paramName };
  }
  return {
    type: "api_key",
    header_name: strategy.headerName,
    header_prefix: strategy.headerPrefix,
  };
}
