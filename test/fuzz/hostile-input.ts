import { connect } from "node:http2";
import type { DescField, DescMessage, DescService } from "@bufbuild/protobuf";

/**
 * One malformed request and what came back; `failed` when the answer is a 5xx other than 501, or
 * an answer that reports an internal failure in its body (`code: "internal"`).
 */
export interface Probe {
  what: string;
  status: number;
  code?: string;
}

/** What an attacker puts in a string field: NUL, a lone surrogate, traversal, junk. */
export const hostileStrings = ["a\u0000b", "../../etc/passwd", "%00", "\u0000"];

/** Raw JSON text, because JSON.stringify would escape or repair these. */
export const hostileJsonValues = ['"\\ud800"', '"x\\udc00y"', '"\\u0000"'];

/** Path segments (already URL-encoded) for ids. */
export const hostileIds = [
  "abc%00def",
  "%00",
  "..%2F..%2Fetc%2Fpasswd",
  "..",
  "%ED%A0%80",
  "%zz",
  "x".repeat(3000),
  "%F0%9F%98%80",
];

export const deepJson = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;
export const deepObject = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

/** Bodies for one JSON object schema: every field in turn set to each hostile or wrong value. */
export function fieldBodies(fields: { name: string; kind: string }[]): string[] {
  const bodies: string[] = [];
  for (const { name, kind } of fields) {
    const key = JSON.stringify(name);
    for (const value of hostileStrings) bodies.push(`{${key}:${JSON.stringify(value)}}`);
    for (const raw of hostileJsonValues) bodies.push(`{${key}:${raw}}`);
    const wrong =
      kind === "string" || kind === "bytes"
        ? ["123", "{}", "[1]", "true"]
        : kind === "object"
          ? ['"x"', "[1]", '{"\\u0000":"v"}', '{"k":"\\ud800"}', deepObject(200)]
          : kind === "array"
            ? ['"x"', '["\\u0000"]', "[{}]", deepJson(200)]
            : ['"x"', "{}", "1e400", "-1", "9007199254740993"];
    for (const raw of wrong) bodies.push(`{${key}:${raw}}`);
    if (kind === "bytes") bodies.push(`{${key}:"!!not base64!!"}`, `{${key}:"YQ="}`);
  }
  return bodies;
}

/** Whole bodies that are wrong however the schema looks. */
export const genericBodies = [
  "null",
  "[]",
  '"text"',
  "1",
  "{",
  '{"a":1,"a":2}',
  '{"__proto__":{"x":1}}',
  deepJson(5000),
  deepObject(5000),
  JSON.stringify({ blob: "x".repeat(2 * 1024 * 1024) }),
];

const kindOfField = (field: DescField): string => {
  if (field.fieldKind === "list") return "array";
  if (field.fieldKind === "map" || field.fieldKind === "message") return "object";
  if (field.fieldKind === "enum") return "enum";
  // ScalarType.STRING = 9, BYTES = 12.
  return field.scalar === 9 ? "string" : field.scalar === 12 ? "bytes" : "number";
};

export function messageFields(message: DescMessage) {
  return message.fields.map((field) => ({ name: field.jsonName, kind: kindOfField(field) }));
}

/** Connect-protocol calls over HTTP/2 carrying raw JSON, so wrong types reach the server as sent. */
export async function connectJsonCalls(
  baseUrl: string,
  service: DescService,
  headers: Record<string, string>,
  onProbe: (probe: Probe) => void,
): Promise<void> {
  const session = connect(baseUrl);
  session.on("error", () => {});
  try {
    for (const method of service.methods) {
      if (method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming") {
        continue;
      }
      const streaming = method.methodKind === "server_streaming";
      const bodies = ["{}", ...fieldBodies(messageFields(method.input)), ...genericBodies];
      for (const body of bodies) {
        const result = await post(
          session,
          `/${service.typeName}/${method.name}`,
          body,
          streaming,
          headers,
        );
        onProbe({ what: `gRPC ${method.name} ${body.slice(0, 60)}`, ...result });
      }
    }
  } finally {
    session.close();
  }
}

function envelope(json: string): Buffer {
  const payload = Buffer.from(json);
  const header = Buffer.alloc(5);
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
}

/** Reads the error code a Connect answer carries, unary or in a stream's end message. */
function connectCode(text: string): string | undefined {
  return /"code":"([a-z_]+)"/.exec(text)?.[1];
}

const serverCodes = new Set(["internal", "unknown", "data_loss", "unavailable"]);

function post(
  session: ReturnType<typeof connect>,
  path: string,
  body: string,
  streaming: boolean,
  headers: Record<string, string>,
): Promise<{ status: number; code?: string }> {
  return new Promise((resolve) => {
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": streaming ? "application/connect+json" : "application/json",
      "connect-protocol-version": "1",
      ...headers,
    });
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      status = Number(h[":status"]);
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    const done = () => {
      const text = Buffer.concat(chunks).toString("latin1");
      const code = connectCode(text);
      // A stream answers 200 and carries its error in the end message.
      const effective = streaming && code && serverCodes.has(code) ? 500 : status;
      resolve({ status: effective, code });
    };
    stream.on("end", done);
    stream.on("error", () => resolve({ status: status || 599 }));
    stream.setTimeout(20_000, () => {
      stream.close();
      resolve({ status: 598, code: "timeout" });
    });
    stream.end(streaming ? envelope(body) : body);
  });
}

export const failed = (probe: Probe) =>
  (probe.status >= 500 && probe.status !== 501) || probe.code === "internal";

/**
 * One unary call in binary gRPC with raw message bytes, so malformed protobuf reaches the server
 * as sent; the status code and message from the trailers (or a trailers-only answer).
 */
export function grpcBinaryCall(
  baseUrl: string,
  path: string,
  message: Uint8Array,
  headers: Record<string, string> = {},
): Promise<{ code: number; message: string }> {
  return new Promise((resolve, reject) => {
    const session = connect(baseUrl);
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    });
    let status: Record<string, unknown> = {};
    stream.on("response", (h) => {
      if (h["grpc-status"] !== undefined) status = h;
    });
    stream.on("trailers", (t) => {
      status = t;
    });
    stream.on("data", () => {});
    stream.on("error", () => {});
    stream.on("close", () => {
      session.close();
      resolve({
        code: Number(status["grpc-status"] ?? -1),
        message: decodeURIComponent(String(status["grpc-message"] ?? "")),
      });
    });
    const framed = Buffer.alloc(5 + message.byteLength);
    framed.writeUInt32BE(message.byteLength, 1);
    framed.set(message, 5);
    stream.end(framed);
  });
}

/** Bytes that are no valid message: the seven kinds of malformed protobuf a decoder must refuse. */
export const malformedProtobuf: Record<string, number[]> = {
  "invalid UTF-8 in a string": [0x0a, 0x02, 0xff, 0xfe],
  "a wrong wire type": [0x0d, 1, 2, 3, 4],
  "a truncated message": [0x0a, 0x0a, 0x61, 0x62],
  "field number 0": [0x02, 0x01, 0x61],
  "a truncated varint": [0x28, 0x80],
  "wire type 7": [0x0f],
  "an end group with no start": [0x0c],
};

/** One unary Connect JSON call; the error code and message the answer carries ("ok" when none). */
export function connectJsonCall(
  baseUrl: string,
  path: string,
  body: string,
): Promise<{ code: string; message: string }> {
  return new Promise((resolve, reject) => {
    const session = connect(baseUrl);
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/json",
      "connect-protocol-version": "1",
    });
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      status = Number(h[":status"]);
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", () => {});
    stream.on("close", () => {
      session.close();
      if (status === 200) return resolve({ code: "ok", message: "" });
      const text = Buffer.concat(chunks).toString("utf8");
      const error = text.startsWith("{")
        ? (JSON.parse(text) as { code?: string; message?: string })
        : {};
      resolve({ code: error.code ?? String(status), message: error.message ?? text });
    });
    stream.end(body);
  });
}
