import { setTimeout as sleep } from "node:timers/promises";
import { deadlineSignal } from "@atrium/sdk";
import { OpenAiError } from "./openai-error.js";

export interface OpenAiHttpOptions {
  /** Like the OpenAI SDK's baseURL, including the version segment: `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey?: string;
  /** Per attempt; default 30 s. */
  timeoutMs?: number;
  /** Further tries after a rate limit, a 5xx or a network error; default 2. */
  retries?: number;
  /** First backoff; doubles per try, with full jitter, unless the provider sent Retry-After. */
  backoffMs?: number;
}

/** The longest a Retry-After or a backoff is waited for. */
const MAX_BACKOFF_MS = 30_000;

/**
 * The HTTP side of an OpenAI-compatible API (OpenAI, Ollama, vLLM, llama.cpp server), shared by
 * memory's models and embeddings and chat's LLM client: one POST, one error type, one retry rule.
 * Not the `openai` npm package: the callers need the raw streamed body (chat traces every token),
 * and the endpoints they talk to are only OpenAI-compatible, which that SDK does not promise.
 */
export function createOpenAiHttp(options: OpenAiHttpOptions) {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const retries = options.retries ?? 2;
  const backoffMs = options.backoffMs ?? 250;

  /** One attempt: the provider's answer when it is 2xx, else an OpenAiError. */
  async function post(path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(`${baseUrl}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        signal: deadlineSignal(options.timeoutMs ?? 30_000, signal),
      });
    } catch (error) {
      throw OpenAiError.fromCause(`POST ${path} failed`, error, signal);
    }
    if (response.ok) return response;
    const detail = (await response.text().catch(() => "")).slice(0, 300);
    const retryAfter = Number(response.headers.get("retry-after"));
    const failure = new OpenAiError(
      `POST ${path} answered HTTP ${response.status}${detail ? `: ${detail}` : ""}`,
      response.status,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
    );
    // Rate limits and server errors are worth another try; a refusal of the request is not.
    failure.retryable = response.status === 429 || response.status >= 500;
    throw failure;
  }

  /**
   * Runs `attempt` (numbered from 1) until it succeeds, fails for good (an error that is not a
   * retryable OpenAiError) or has been retried `retries` times. Waits what the provider asked
   * for, or an exponential backoff with full jitter; an abort of `signal` ends the wait.
   */
  async function retrying<T>(attempt: (n: number) => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let n = 1; ; n++) {
      try {
        return await attempt(n);
      } catch (error) {
        if (!(error instanceof OpenAiError) || !error.retryable || n > retries) throw error;
        const wait = error.retryAfterMs ?? Math.random() * backoffMs * 2 ** (n - 1);
        await sleep(Math.min(wait, MAX_BACKOFF_MS), undefined, { signal }).catch(() => {
          throw error;
        });
      }
    }
  }

  return {
    post,
    retrying,
    /** POST with retries, answering the parsed JSON body. */
    postJson: (path: string, body: unknown): Promise<unknown> =>
      retrying(async () => {
        const response = await post(path, body);
        try {
          return await response.json();
        } catch {
          throw new OpenAiError(`POST ${path}: response is not JSON`, response.status);
        }
      }),
  };
}

export type OpenAiHttp = ReturnType<typeof createOpenAiHttp>;
