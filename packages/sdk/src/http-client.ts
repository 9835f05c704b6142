import { AtriumHttpError } from "./errors.js";
import { userAgent } from "./version.js";

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export type QueryValue = string | number | boolean | undefined;

export interface HttpClientOptions {
  baseUrl: string;
  /** Extra headers on every request (credentials, tracing). */
  headers?: Record<string, string>;
  fetch?: FetchLike;
  /** Builds the error thrown for a non-2xx answer; default AtriumHttpError. */
  errorFor?: (status: number, body: unknown) => Error;
}

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface HttpClient {
  readonly fetch: FetchLike;
  url(path: string, query?: Record<string, QueryValue>): URL;
  /** Sends JSON, returns the parsed JSON answer; throws `errorFor(status, body)` on non-2xx. */
  json<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
  /** The raw answer (streams); the caller checks the status. */
  send(method: string, path: string, options?: RequestOptions): Promise<Response>;
  /** Reads a failed answer into the configured error. */
  failure(response: Response): Promise<Error>;
}

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const fetchImpl: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  // A trailing slash keeps a base path (`http://host/api/v1/`) when paths are resolved against it.
  const base = new URL(options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`);
  const errorFor = options.errorFor ?? ((status, body) => new AtriumHttpError(status, body));

  const url = (path: string, query: Record<string, QueryValue> = {}) => {
    const target = new URL(path.replace(/^\//, ""), base);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== "") target.searchParams.set(name, String(value));
    }
    return target;
  };

  const send = (method: string, path: string, request: RequestOptions = {}) => {
    const headers = new Headers({
      "user-agent": userAgent,
      ...options.headers,
      ...request.headers,
    });
    let body: string | undefined;
    if (request.body !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(request.body);
    }
    return fetchImpl(url(path, request.query), { method, headers, body, signal: request.signal });
  };

  const failure = async (response: Response) => errorFor(response.status, await readBody(response));

  return {
    fetch: fetchImpl,
    url,
    send,
    failure,
    async json<T>(method: string, path: string, request?: RequestOptions) {
      const response = await send(method, path, {
        ...request,
        headers: { accept: "application/json", ...request?.headers },
      });
      if (!response.ok) throw await failure(response);
      return (await readBody(response)) as T;
    },
  };
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
