import assert from "node:assert/strict";
import { test } from "node:test";
import {
  context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-node";
import { encodeSpans } from "./otlp-span-encoder.js";

// Which length-delimited fields of each OTLP message are messages themselves (the others are
// strings or bytes), to decode a request without its .proto files.
const messages: Record<string, Record<number, string>> = {
  request: { 1: "resourceSpans" },
  resourceSpans: { 1: "resource", 2: "scopeSpans" },
  resource: { 1: "keyValue" },
  scopeSpans: { 1: "scope", 2: "span" },
  scope: { 3: "keyValue" },
  span: { 9: "keyValue", 11: "event", 13: "link", 15: "status" },
  event: { 3: "keyValue" },
  link: { 4: "keyValue" },
  status: {},
  keyValue: { 2: "anyValue" },
  anyValue: { 5: "arrayValue" },
  arrayValue: { 1: "anyValue" },
};

type Decoded = [number, unknown][];

/** Fields in order of number (repeated ones in their order), without proto3's default values. */
function decode(bytes: Uint8Array, type: string): Decoded {
  const fields: Decoded = [];
  let at = 0;
  const varint = () => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = bytes[at++];
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  const take = (length: number) => {
    at += length;
    return bytes.subarray(at - length, at);
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const field = key >> 3;
    const wire = key & 7;
    let value: unknown;
    if (wire === 0) value = varint();
    else if (wire === 1) value = Buffer.from(take(8)).toString("hex");
    else if (wire === 5) value = Buffer.from(take(4)).toString("hex");
    else {
      const length = Number(varint());
      const body = take(length);
      const nested = messages[type][field];
      value = nested ? decode(body, nested) : Buffer.from(body).toString("hex");
    }
    if (value === 0n || value === "" || value === "0000000000000000") continue;
    fields.push([field, value]);
  }
  return fields.sort((a, b) => a[0] - b[0]);
}

function recordedSpans() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "atrium-test", "deployment.count": 2 }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("atrium-memory", "1.2.3");
  const parent = new W3CTraceContextPropagator().extract(
    ROOT_CONTEXT,
    { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
    defaultTextMapGetter,
  );
  const server = tracer.startSpan(
    "GET /api/v1/sessions/:id/context",
    {
      kind: SpanKind.SERVER,
      attributes: {
        "http.request.method": "GET",
        "http.response.status_code": 200,
        "atrium.offset": -3,
        "atrium.ratio": 0.25,
        "atrium.cached": true,
        "atrium.tags": ["a", "ß", "語"],
        // Long enough that its length takes two varint bytes, and the span's three.
        "atrium.long": "x".repeat(300),
        "atrium.longer": "y".repeat(20_000),
      },
    },
    parent,
  );
  server.addEvent("retry", { attempt: 2 });
  const child = tracer.startSpan(
    "SELECT",
    {
      kind: SpanKind.CLIENT,
      links: [{ context: server.spanContext(), attributes: { why: "follows" } }],
    },
    trace.setSpan(context.active(), server),
  );
  child.setStatus({ code: SpanStatusCode.ERROR, message: "no such table" });
  child.end();
  provider.getTracer("atrium-sql").startSpan("INSERT", { kind: SpanKind.INTERNAL }).end();
  server.end();
  return exporter.getFinishedSpans();
}

test("the OTLP request encodes the same message as the SDK's serializer", () => {
  const spans = recordedSpans();
  assert.equal(spans.length, 3);
  const sdk = ProtobufTraceSerializer.serializeRequest(spans);
  assert.ok(sdk);
  const ours = encodeSpans(spans);
  assert.deepEqual(decode(ours, "request"), decode(sdk, "request"));
});

test("a batch larger than the first buffer is whole", () => {
  const spans = Array.from({ length: 40 }, () => recordedSpans()).flat();
  const sdk = ProtobufTraceSerializer.serializeRequest(spans);
  assert.ok(sdk && sdk.length > 64 * 1024);
  assert.deepEqual(decode(encodeSpans(spans), "request"), decode(sdk, "request"));
});
