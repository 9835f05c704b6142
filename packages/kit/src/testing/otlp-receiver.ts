import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startTracing, type Tracing } from "../observability/tracing.js";

export interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  /** `code` 2 is ERROR. */
  status?: { code?: number };
}

/** A span with the `service.name` of its resource and the name of its instrumentation scope. */
export interface ReceivedSpan extends OtlpSpan {
  service: string;
  scope: string;
}

export interface OtlpReceiverOptions {
  /**
   * Starts this process's tracing, exporting to the receiver (default): OpenTelemetry is then
   * on for the whole process, so such a test belongs in a file of its own. Off, the receiver
   * only listens, for services started elsewhere with its `endpoint`.
   */
  traceThisProcess?: boolean;
}

export interface OtlpReceiver {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT (`/v1/traces` is appended). */
  endpoint: string;
  /** Every exported body as received (OTLP/HTTP JSON), to search for what must not be there. */
  bodies: string[];
  /** The spans of every trace export received so far. */
  spans(): ReceivedSpan[];
  /** Sends what is buffered, stops tracing, then the receiver; once, however often called. */
  close(): Promise<void>;
}

/** An attribute's value, whatever its OTLP type (`stringValue`, `intValue`...). */
export function otlpAttribute(
  span: { attributes?: OtlpAttribute[] } | undefined,
  key: string,
): unknown {
  const value = span?.attributes?.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
}

interface OtlpExport {
  resourceSpans: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans: { scope?: { name?: string }; spans: OtlpSpan[] }[];
  }[];
}

function spansOf(body: string): ReceivedSpan[] {
  return (JSON.parse(body) as OtlpExport).resourceSpans.flatMap(({ resource, scopeSpans }) => {
    const service = String(otlpAttribute(resource, "service.name"));
    return scopeSpans.flatMap(({ scope, spans }) =>
      spans.map((span) => ({ ...span, service, scope: scope?.name ?? "" })),
    );
  });
}

/** An OTLP/HTTP receiver on loopback (the JSON encoding), by default this process's exporter. */
export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const bodies: string[] = [];
  const traces: string[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      bodies.push(body);
      if (request.url === "/v1/traces") traces.push(body);
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const stopServer = () => new Promise<void>((resolve) => server.close(() => resolve()));
  let tracing: Tracing | undefined;
  if (options.traceThisProcess ?? true) {
    // The SDK's exporter reads its endpoint from process.env itself.
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    });
    tracing = await startTracing({ serviceName: "atrium-test" }).catch(async (error) => {
      await stopServer();
      throw error;
    });
    if (!tracing) {
      await stopServer();
      throw new Error("tracing was already started in this process");
    }
  }
  let closed: Promise<void> | undefined;
  return {
    endpoint,
    bodies,
    spans: () => traces.flatMap(spansOf),
    close() {
      closed ??= (async () => {
        if (tracing) {
          await tracing.shutdown();
          delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
          delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
        }
        await stopServer();
      })();
      return closed;
    },
  };
}
