export interface OpenAiHttpOptions {
  /** Like the OpenAI SDK's baseURL, including the version segment: `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey?: string;
  /** Per attempt; default 30 s. */
  timeoutMs?: number;
  /** Retries after the first attempt, on network errors, 429 and 5xx; default 2. */
  retries?: number;
  /** Base of the exponential backoff; default 250 ms. */
  backoffMs?: number;
}

/** An upstream answer that retrying will not fix (4xx other than 429, malformed body). */
export class OpenAiHttpError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "OpenAiHttpError";
  }
}

function retryable(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * POSTs JSON to an OpenAI-compatible endpoint with a timeout per attempt and retries with
 * exponential backoff and jitter. Error messages carry the status and the path, never the key.
 */
export async function postOpenAiJson(
  options: OpenAiHttpOptions,
  path: string,
  body: unknown,
): Promise<unknown> {
  const url = `${options.baseUrl.replace(/\/+$/, "")}${path}`;
  const retries = options.retries ?? 2;
  const backoffMs = options.backoffMs ?? 250;
  let lastError: unknown;
  for (let attempt = 0; attempt <= retries; attempt++) {
    if (attempt > 0) {
      const delay = backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
    } catch (error) {
      lastError = new OpenAiHttpError(`POST ${path} failed: ${(error as Error).message}`);
      continue;
    }
    if (response.ok) {
      try {
        return await response.json();
      } catch {
        throw new OpenAiHttpError(`POST ${path}: response is not JSON`, response.status);
      }
    }
    const text = (await response.text().catch(() => "")).slice(0, 200);
    lastError = new OpenAiHttpError(
      `POST ${path} answered ${response.status}${text ? `: ${text}` : ""}`,
      response.status,
    );
    if (!retryable(response.status)) throw lastError;
  }
  throw lastError;
}
