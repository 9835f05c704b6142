import { sdkVersion } from "@atrium/sdk";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { withRequestSignal } from "./request-signal.js";
import { metaKeys } from "./stateless-lifecycle.js";

export interface StdioBridgeOptions {
  /** The gateway's MCP endpoint, e.g. http://127.0.0.1:8082/mcp. */
  url: URL;
  /** The gateway key whose scope this desktop client acts in. */
  apiKey: string;
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  /** Told about transport failures (stderr: stdout carries the protocol). */
  onError?: (error: Error) => void;
}

export interface StdioBridge {
  /** Resolves when either side closes. */
  closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * `atrium mcp`: a stdio MCP server for desktop clients that relays every message to the gateway's
 * /mcp. The gateway stays the only place that maps a key to a scope and holds service
 * credentials; the desktop holds one key. The client's name from `initialize` becomes the
 * User-Agent, so the broker's audit of credentialed calls names the desktop client.
 */
export async function startStdioBridge(options: StdioBridgeOptions): Promise<StdioBridge> {
  let userAgent = `atrium-mcp-stdio/${sdkVersion}`;
  const fetchOwnSignal = withRequestSignal(fetch);
  const http = new StreamableHTTPClientTransport(options.url, {
    fetch: (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("x-api-key", options.apiKey);
      headers.set("user-agent", userAgent);
      if (typeof init?.body === "string") setRoutingHeaders(headers, init.body);
      return fetchOwnSignal(input, { ...init, headers });
    },
  });
  const stdio = new StdioServerTransport(
    options.stdin as NodeJS.ReadStream | undefined,
    options.stdout as NodeJS.WriteStream | undefined,
  );
  let closing: Promise<void> | undefined;
  // Each transport's close() calls its own onclose, which closes the other, synchronously: the
  // promise is in place before either close() runs, so the re-entrant calls return it.
  const close = () => {
    if (closing) return closing;
    let done = () => {};
    closing = new Promise<void>((resolve) => {
      done = resolve;
    });
    void Promise.allSettled([http.close(), stdio.close()]).then(done);
    return closing;
  };
  const closed = new Promise<void>((resolve) => {
    http.onclose = () => void close().then(resolve);
    stdio.onclose = () => void close().then(resolve);
  });

  stdio.onmessage = (message: JSONRPCMessage) => {
    if ("method" in message && message.method === "initialize") {
      const info = (message.params as { clientInfo?: { name?: string; version?: string } })
        .clientInfo;
      if (info?.name)
        userAgent = `${info.name}/${info.version ?? "0"} atrium-mcp-stdio/${sdkVersion}`;
    }
    http.send(message).catch((error: Error) => {
      options.onError?.(error);
      // A request the gateway refused (401, 403, unreachable) still gets an answer: its JSON-RPC
      // error when the refusal is one (a 2026-07-28 refusal is a 400 or 404 with one).
      if ("id" in message && "method" in message) {
        void stdio.send({
          jsonrpc: "2.0",
          id: message.id,
          error: jsonRpcErrorIn(error.message) ?? {
            code: -32000,
            message: `Atrium gateway: ${error.message}`,
          },
        });
      }
    });
  };
  http.onmessage = (message) => {
    void stdio.send(message);
  };
  http.onerror = (error) => options.onError?.(error);
  stdio.onerror = (error) => options.onError?.(error);
  await http.start();
  await stdio.start();
  // The desktop client quitting closes stdin; the relay ends with it.
  (options.stdin ?? process.stdin).once("end", () => void close());
  return { closed, close };
}

/**
 * A 2026-07-28 request names its version in `_meta` and nowhere else on stdio; over HTTP it also
 * carries it, its method and what it names as headers (SEP-2243), which the relay adds.
 */
function setRoutingHeaders(headers: Headers, body: string): void {
  let message: { method?: unknown; params?: Record<string, unknown> } | undefined;
  try {
    message = JSON.parse(body);
  } catch {
    return;
  }
  const meta = message?.params?._meta as Record<string, unknown> | undefined;
  const version = meta?.[metaKeys.protocolVersion];
  if (typeof version !== "string" || typeof message?.method !== "string") return;
  headers.set("mcp-protocol-version", version);
  headers.set("mcp-method", message.method);
  const named = message.method === "resources/read" ? message.params?.uri : message.params?.name;
  if (typeof named === "string") {
    headers.set(
      "mcp-name",
      // Header values are ASCII; anything else goes as SEP-2243's base64 form.
      /^[\x20-\x7e]*$/.test(named)
        ? named
        : `=?base64?${Buffer.from(named, "utf8").toString("base64")}?=`,
    );
  }
}

/** The JSON-RPC error in the text of the SDK's refused-POST error, if there is one. */
function jsonRpcErrorIn(text: string): { code: number; message: string } | undefined {
  const start = text.indexOf("{");
  if (start < 0) return undefined;
  try {
    const body = JSON.parse(text.slice(start)) as { error?: { code?: unknown; message?: unknown } };
    const { code, message } = body.error ?? {};
    return typeof code === "number" && typeof message === "string"
      ? (body.error as { code: number; message: string })
      : undefined;
  } catch {
    return undefined;
  }
}
