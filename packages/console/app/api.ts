// The operator key lives in sessionStorage (gone when the tab closes) and travels only in the
// x-api-key header: never in a URL, so it cannot reach access logs or browser history.
const keyName = "atrium.operatorKey";

export function operatorKey(): string | undefined {
  return sessionStorage.getItem(keyName) ?? undefined;
}

export function rememberOperatorKey(key: string): void {
  sessionStorage.setItem(keyName, key);
}

export function forgetOperatorKey(): void {
  sessionStorage.removeItem(keyName);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Calls the gateway's /v1 API on the console's own origin; errors carry the API's message. */
export async function callApi<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  const key = operatorKey();
  if (key) headers["x-api-key"] = key;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit",
  });
  const text = await response.text();
  const json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  if (!response.ok) {
    const message = typeof json.message === "string" ? json.message : response.statusText;
    throw new ApiError(response.status, `${response.status}: ${message}`);
  }
  return json as T;
}
