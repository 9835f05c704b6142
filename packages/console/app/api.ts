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
    // The gateway's errors carry `message`; the agent host's, passed through, carry `error`.
    const reason = json.message ?? json.error;
    const message = typeof reason === "string" ? reason : response.statusText;
    throw new ApiError(response.status, `${response.status}: ${message}`);
  }
  return json as T;
}

/** One server-sent event as the trace stream sends it. */
export interface StreamEvent {
  id: string | undefined;
  event: string;
  data: string;
}

/**
 * Reads an SSE stream through fetch, not EventSource: EventSource cannot send the key header, and
 * the key must stay out of the URL. Resolves when the stream ends; `lastEventId` resumes it.
 */
export async function readEventStream(
  path: string,
  lastEventId: string | undefined,
  onEvent: (event: StreamEvent) => void,
  signal: AbortSignal,
  onOpen?: () => void,
): Promise<void> {
  const headers: Record<string, string> = { accept: "text/event-stream" };
  const key = operatorKey();
  if (key) headers["x-api-key"] = key;
  if (lastEventId) headers["last-event-id"] = lastEventId;
  const response = await fetch(path, { headers, signal, credentials: "omit" });
  if (!response.ok || !response.body) {
    throw new ApiError(response.status, `${response.status}: the stream could not be opened`);
  }
  onOpen?.();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, "\n");
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      const event: StreamEvent = { id: undefined, event: "message", data: "" };
      const data: string[] = [];
      for (const line of block.split("\n")) {
        const colon = line.indexOf(":");
        if (colon === 0) continue;
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "id") event.id = text;
        else if (field === "event") event.event = text;
        else if (field === "data") data.push(text);
      }
      if (data.length === 0) continue;
      event.data = data.join("\n");
      onEvent(event);
    }
  }
}

/** A query string of the values that are set. */
export function queryString(values: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== "") params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

export function when(timestamp: string | undefined): string {
  return timestamp ? new Date(timestamp).toLocaleString() : "—";
}
