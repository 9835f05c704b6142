import { Code } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";

/**
 * How Connect's binary serialization words a request it cannot decode (invalid UTF-8 in a
 * string, a wrong wire type, a truncated message, field number 0); it reports it as Internal.
 */
const PARSE_BINARY = "parse binary: ";
const GRPC_WEB_TRAILER = 0x80;

/** What a caller reads for bytes that are no valid request message, on every gRPC path. */
export const invalidRequestMessage = (typeName: string, reason: string) =>
  `request is not a valid ${typeName}: ${reason.replace(PARSE_BINARY, "")}`;

/**
 * A Connect router handler whose undecodable requests are the caller's InvalidArgument, not
 * Internal, on each protocol it speaks: Connect (a 400 and `invalid_argument`), gRPC (the trailer
 * status) and gRPC-Web (the trailer frame). Connect has no hook between reading a request and
 * parsing it, so its answer is mended: only an Internal answer whose message is the binary parse
 * failure is touched, and only when the answer is an error already.
 */
export function withCallerParseErrors(handler: UniversalHandler): UniversalHandler {
  const typeName = handler.method.input.typeName;
  const mend = (message: string) =>
    message.startsWith(PARSE_BINARY) ? invalidRequestMessage(typeName, message) : undefined;
  const mended = async (...args: Parameters<UniversalHandler>) => {
    const response = await handler(...args);
    const type = response.header?.get("content-type") ?? "";
    if (!response.body) return response;
    if (type.startsWith("application/grpc-web")) {
      return { ...response, body: mapChunks(response.body, (c) => mendTrailerFrame(c, mend)) };
    }
    if (type.startsWith("application/grpc")) {
      const trailer = response.trailer;
      if (!trailer) return response;
      return {
        ...response,
        body: mapChunks(
          response.body,
          (c) => c,
          () => mendStatus(trailer, mend),
        ),
      };
    }
    if (response.status === 500 && type.startsWith("application/json")) {
      return mendConnectError(response, mend);
    }
    return response;
  };
  return Object.assign(mended, handler);
}

async function* mapChunks(
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  map: (chunk: Uint8Array) => Uint8Array,
  atEnd?: () => void,
): AsyncIterable<Uint8Array> {
  for await (const chunk of body) yield map(chunk);
  atEnd?.();
}

/** A gRPC status (trailers, or a gRPC-Web trailer frame's lines) with the parse failure mended. */
function mendStatus(status: Headers, mend: (message: string) => string | undefined): boolean {
  if (status.get("grpc-status") !== String(Code.Internal)) return false;
  const message = mend(decodeURIComponent(status.get("grpc-message") ?? ""));
  if (message === undefined) return false;
  status.set("grpc-status", String(Code.InvalidArgument));
  status.set("grpc-message", encodeURIComponent(message));
  return true;
}

/** A gRPC-Web frame: an uncompressed trailer frame holding the parse failure is rewritten. */
function mendTrailerFrame(
  frame: Uint8Array,
  mend: (message: string) => string | undefined,
): Uint8Array {
  if (frame[0] !== GRPC_WEB_TRAILER || frame.byteLength < 5) return frame;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  if (view.getUint32(1) !== frame.byteLength - 5) return frame;
  const lines = new TextDecoder().decode(frame.subarray(5)).split("\r\n").filter(Boolean);
  const trailer = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) trailer.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  if (!mendStatus(trailer, mend)) return frame;
  let text = "";
  trailer.forEach((value, name) => {
    text += `${name}: ${value}\r\n`;
  });
  const data = new TextEncoder().encode(text);
  const mended = new Uint8Array(5 + data.byteLength);
  mended[0] = GRPC_WEB_TRAILER;
  new DataView(mended.buffer).setUint32(1, data.byteLength);
  mended.set(data, 5);
  return mended;
}

/** A Connect unary error body (`{"code":"internal","message":"parse binary: …"}`) mended to 400. */
async function mendConnectError(
  response: UniversalServerResponse,
  mend: (message: string) => string | undefined,
): Promise<UniversalServerResponse> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body ?? []) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  const unchanged = { ...response, body: mapChunks([bytes], (c) => c) };
  if (response.header?.has("content-encoding")) return unchanged;
  let error: { code?: unknown; message?: unknown };
  try {
    error = JSON.parse(bytes.toString("utf8"));
  } catch {
    return unchanged;
  }
  const message = typeof error.message === "string" ? mend(error.message) : undefined;
  if (error.code !== "internal" || message === undefined) return unchanged;
  const body = Buffer.from(JSON.stringify({ ...error, code: "invalid_argument", message }));
  response.header?.set("content-length", String(body.byteLength));
  return { ...response, status: 400, body: mapChunks([body], (c) => c) };
}
