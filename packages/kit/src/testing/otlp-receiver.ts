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
}

export interface OtlpReceiver {
  /** Every exported body as received (OTLP/HTTP JSON), to search for what must not be there. */
  bodies: string[];
  /** The spans of every body received so far. */
  spans(): OtlpSpan[];
  /** Sends what is buffered, stops tracing, then the receiver; once, however often called. */
  close(): Promise<void>;
}

/** An attribute's value, whatever its OTLP type (`stringValue`, `intValue`...). */
export function otlpAttribute(span: OtlpSpan | undefined, key: string): unknown {
  const value = span?.attributes?.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
}

/**
 * An OTLP/HTTP receiver on loopback with this process's tracing exporting to it in JSON: a test
 * that uses it switches OpenTelemetry on for its whole process, so it belongs in a file of its own.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      bodies.push(body);
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // The SDK's exporter reads its endpoint from process.env itself.
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  });
  let tracing: Tracing | undefined;
  try {
    tracing = await startTracing({ serviceName: "atrium-test" });
    if (!tracing) throw new Error("tracing was already started in this process");
  } catch (error) {
    server.close();
    throw error;
  }
  const started = tracing;
  let closed: Promise<void> | undefined;
  return {
    bodies,
    spans: () =>
      bodies.flatMap((body) =>
        (
          JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }
        ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
      ),
    close() {
      closed ??= (async () => {
        await started.shutdown();
        delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
        delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return closed;
    },
  };
}
