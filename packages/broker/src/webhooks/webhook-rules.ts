import { isIP } from "node:net";
import { isLoopbackAddress, isPublicAddress } from "@atrium/kit/net";
import { webhookSecretKey } from "@atrium/kit/webhook-signing";
import { isWebhookEventType, WEBHOOK_EVENT_TYPES } from "./webhook-events.js";

/** Subscription fields as the API accepts them: absent means not sent. */
export interface WebhookFields {
  name?: string;
  url?: string;
  event_types?: string[];
  secret?: string;
  enabled?: boolean;
  description?: string;
}

export interface WebhookRuleOptions {
  /**
   * Loopback hosts are accepted only when this is set (a development and test switch), and
   * they are then the only hosts http:// is accepted on.
   */
  allowHttpLoopback: boolean;
}

export const WEBHOOK_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,99}$/;
const DESCRIPTION_MAX = 1000;

/**
 * A subscription field that breaks a rule. Plain (no kit error) so that atriumctl can run these
 * rules without loading the service stack; the broker answers it as 400 InvalidArgument.
 */
export class WebhookFieldError extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field} ${problem}`);
    this.name = "WebhookFieldError";
  }
}

const invalid = (field: string, message: string) => new WebhookFieldError(field, message);

const bareHost = (hostname: string) => hostname.replace(/^\[|\]$/g, "");

function isLoopback(hostname: string): boolean {
  const host = bareHost(hostname);
  return host === "localhost" || isLoopbackAddress(host);
}

/**
 * An IP literal (or `localhost`) outside the public ranges; a name is checked where it is
 * resolved, at delivery.
 */
function isNonPublicLiteral(hostname: string): boolean {
  const host = bareHost(hostname);
  if (host === "localhost") return true;
  return isIP(host) !== 0 && !isPublicAddress(host);
}

/** Throws a 400 naming the first bad field; `complete` requires the fields a new row needs. */
export function validateWebhookFields(
  fields: WebhookFields,
  options: WebhookRuleOptions,
  complete: boolean,
): void {
  if (complete || fields.name !== undefined) {
    if (!fields.name || !WEBHOOK_NAME_PATTERN.test(fields.name)) {
      throw invalid("name", "must be 1-100 of a-z, 0-9, '.', '_', '-', starting alphanumeric");
    }
  }
  if (complete || fields.url !== undefined) validateUrl(fields.url ?? "", options);
  if (complete || fields.event_types !== undefined) {
    const types = fields.event_types ?? [];
    if (types.length === 0) {
      throw invalid("event_types", `must name at least one of ${WEBHOOK_EVENT_TYPES.join(", ")}`);
    }
    const unknown = types.find((type) => !isWebhookEventType(type));
    if (unknown !== undefined) {
      throw invalid(
        "event_types",
        `has unknown "${unknown}"; known: ${WEBHOOK_EVENT_TYPES.join(", ")}`,
      );
    }
  }
  if (fields.secret !== undefined && fields.secret !== "" && !webhookSecretKey(fields.secret)) {
    throw invalid("secret", "must be whsec_ followed by base64 of 24 to 64 bytes");
  }
  if (fields.description !== undefined && fields.description.length > DESCRIPTION_MAX) {
    throw invalid("description", `must be at most ${DESCRIPTION_MAX} characters`);
  }
}

function validateUrl(text: string, options: WebhookRuleOptions): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid("url", "must be an absolute http(s) URL");
  }
  if (url.username || url.password) throw invalid("url", "must not carry credentials");
  if (url.hash) throw invalid("url", "must not have a fragment");
  if (
    isNonPublicLiteral(url.hostname) &&
    !(options.allowHttpLoopback && isLoopback(url.hostname))
  ) {
    throw invalid(
      "url",
      "must not point at a loopback, private, link-local or otherwise non-public address",
    );
  }
  if (url.protocol === "https:") return;
  if (url.protocol !== "http:") throw invalid("url", "must use https");
  if (!options.allowHttpLoopback || !isLoopback(url.hostname)) {
    throw invalid(
      "url",
      "must use https (http only on a loopback host with WEBHOOK_ALLOW_HTTP_LOOPBACK=true)",
    );
  }
}
