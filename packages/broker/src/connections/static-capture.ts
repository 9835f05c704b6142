import {
  invalidArgument,
  invalidCredentials,
  providerNotValidatable,
  providerUnavailable,
} from "@atrium/kit";
import type { CallerContext } from "../audit/audit-log.js";
import type { BrokerContext } from "../broker-context.js";
import type { ProviderRecord } from "../providers/provider-store.js";
import type { ConnectionRecord, Credential } from "./connection-record.js";
import {
  credentialStrategy,
  DEFAULT_API_KEY_HEADER,
  DEFAULT_QUERY_PARAM,
} from "./credential-strategy.js";
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
  const headers: Record<string, string> = { accept: "application/json" };
  const url = new URL(endpoint);
  // Presented as the SDKs will present it: a key that passes here works when injected.
  const strategy = credentialStrategy(provider.auth_type, provider.params);
  if (provider.auth_type === "basic_auth") {
    const pair = `${credential.username ?? ""}:${credential.password ?? ""}`;
    headers.authorization = `Basic ${Buffer.from(pair, "utf8").toString("base64")}`;
  } else if (strategy.type === "query_param") {
    url.searchParams.set(strategy.paramName || DEFAULT_QUERY_PARAM, credential.api_key ?? "");
  } else {
    headers[strategy.headerName || DEFAULT_API_KEY_HEADER] =
      `${strategy.headerPrefix}${credential.api_key ?? ""}`;
  }
  let response: Response;
  try {
    response = await fetch(url, {
      headers,
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
