import { AtriumHttpError } from "@atrium/sdk";
import {
  type CallToolResult,
  type ClientCapabilities,
  type ElicitRequestURLParams,
  UrlElicitationRequiredError,
} from "@modelcontextprotocol/sdk/types.js";
import { metaKeys } from "./transport/stateless-lifecycle.js";

/**
 * A pending item of a yielded chat step (or of a refused credentialed call) asking the user to
 * connect an account: the gateway's connect flow for that user and provider. Completing it
 * resumes the waiting step by itself.
 */
export interface ConsentItem {
  kind: "consent";
  provider: string;
  authorization_url: string;
  detail: string;
}

const isConsentItem = (item: unknown): item is ConsentItem => {
  const candidate = item as Partial<ConsentItem> | null;
  return (
    typeof candidate === "object" &&
    candidate !== null &&
    candidate.kind === "consent" &&
    typeof candidate.provider === "string" &&
    typeof candidate.authorization_url === "string" &&
    /^https?:\/\//.test(candidate.authorization_url)
  );
};

/** The consent items of a list of pending items (of any kind, or not a list at all). */
export function consentItemsOf(pending: unknown): ConsentItem[] {
  return Array.isArray(pending) ? pending.filter(isConsentItem) : [];
}

/** The consent items a service's refusal carries in its body's `pending`, if any. */
export function consentItemsOfError(error: unknown): ConsentItem[] {
  if (!(error instanceof AtriumHttpError)) return [];
  const body = error.body as { pending?: unknown } | null | undefined;
  return consentItemsOf(body?.pending);
}

/**
 * The client's capabilities as this request declares them: 2026-07-28 puts them in every
 * request's `_meta`; a server that saw the client's initialize (a connection of its own) knows
 * them from there. Over stateless HTTP an older client's initialize went to another server, so
 * nothing is known of it.
 */
export function clientCapabilitiesOf(
  meta: Record<string, unknown> | undefined,
  initialized: ClientCapabilities | undefined,
): ClientCapabilities | undefined {
  const declared = meta?.[metaKeys.clientCapabilities];
  return typeof declared === "object" && declared !== null
    ? (declared as ClientCapabilities)
    : initialized;
}

export const supportsUrlElicitation = (capabilities: ClientCapabilities | undefined) =>
  typeof capabilities?.elicitation?.url === "object" && capabilities.elicitation.url !== null;

const sentence = (item: ConsentItem) =>
  `Connect ${item.provider}: ${item.detail ? `${item.detail} ` : ""}Open ${item.authorization_url} to give consent.`;

/** URL-mode elicitation parameters for each item; `ref` names what waits (a step, a call). */
export function consentElicitations(items: ConsentItem[], ref: string): ElicitRequestURLParams[] {
  return items.map((item) => ({
    mode: "url",
    elicitationId: `consent:${ref}:${item.provider}`,
    url: item.authorization_url,
    message: sentence(item),
  }));
}

/**
 * What to answer when a tool needs the user's consent first: where the client declared URL-mode
 * elicitation, the protocol's URLElicitationRequiredError (-32042, which needs no stream: the
 * client opens the URL and calls again); elsewhere a tool result with the URL in its text and
 * structured content, for the model to hand to its user.
 */
export function consentAnswer(
  items: ConsentItem[],
  options: {
    capabilities: ClientCapabilities | undefined;
    ref: string;
    /** What the model should do once the user has connected. */
    afterwards: string;
    /** The tool's structured content besides `consent` (ask's own fields; none for a refusal). */
    structured?: Record<string, unknown>;
  },
): CallToolResult {
  if (supportsUrlElicitation(options.capabilities)) {
    throw new UrlElicitationRequiredError(
      consentElicitations(items, options.ref),
      `The user's consent is needed first: ${items.map((item) => item.provider).join(", ")}. ${options.afterwards}`,
    );
  }
  const consent = items.map(({ provider, authorization_url, detail }) => ({
    provider,
    authorization_url,
    detail,
  }));
  const structured = { ...options.structured, consent };
  return {
    // A refusal has no output of the tool's schema; only ask's yield is a regular result.
    ...(options.structured ? {} : { isError: true }),
    structuredContent: structured,
    content: [
      {
        type: "text",
        text: `${items.map(sentence).join("\n")}\nAsk the user to open the link. ${options.afterwards}`,
      },
      { type: "text", text: JSON.stringify(structured) },
    ],
  };
}
