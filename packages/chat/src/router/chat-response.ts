import type { KernelOutput, PendingItem, Source } from "../kernel/kernel-types.js";

export const maxSources = 10;
export const answerFallbackLength = 2000;

export interface ChatResponse {
  workflow_id: string;
  step_id: string;
  status: KernelOutput["status"];
  answer: string;
  sources: Source[];
  tokens: Record<string, number>;
  elapsed_ms: number;
  /**
   * What the step waits for when it yields: each item's `kind` (`credentials`, `approval`) and a
   * `detail` naming the setting or approval to supply. Present only on `yield`.
   */
  pending?: PendingItem[];
}

function payloadText(payload: unknown): string {
  if (payload === undefined || payload === null) return "";
  if (typeof payload === "string") return payload;
  try {
    return JSON.stringify(payload) ?? String(payload);
  } catch {
    return String(payload);
  }
}

/** The answer: the summary, or when there is none the payload as text cut to 2,000 characters. */
export function answerOf(output: KernelOutput): string {
  if (typeof output.summary === "string" && output.summary !== "") return output.summary;
  return payloadText(output.payload).slice(0, answerFallbackLength);
}

export function sourcesOf(output: KernelOutput): Source[] {
  const sources = Array.isArray(output.metadata?.sources) ? output.metadata.sources : [];
  return sources.slice(0, maxSources).map((s) => ({
    title: String(s.title ?? ""),
    url: String(s.url ?? ""),
    source: String(s.source ?? ""),
  }));
}

export function pendingOf(output: KernelOutput): PendingItem[] {
  const pending = Array.isArray(output.metadata?.pending) ? output.metadata.pending : [];
  return pending.map((item) =>
    item.kind === "consent"
      ? {
          kind: item.kind,
          provider: String(item.provider ?? ""),
          authorization_url: String(item.authorization_url ?? ""),
          detail: String(item.detail ?? ""),
        }
      : { kind: item.kind, detail: String(item.detail ?? "") },
  );
}

export function tokensOf(output: KernelOutput): Record<string, number> {
  const tokens: Record<string, number> = {};
  for (const [key, value] of Object.entries(output.metadata?.tokens ?? {})) {
    if (typeof value === "number") tokens[key] = value;
  }
  return tokens;
}
