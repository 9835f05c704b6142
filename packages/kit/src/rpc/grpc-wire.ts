import { Code, ConnectError } from "@connectrpc/connect";

/**
 * The gRPC wire pieces shared by the unary server path (`server/grpc-unary-handler.ts`) and the
 * unary client transport (`rpc/grpc-client-transport.ts`): the 5-byte envelope and HTTP/2
 * headers as web `Headers`. Checks and codes are those of Connect's gRPC protocol.
 */
export const envelopeHeaderBytes = 5;
const compressedFlag = 0b1;

/** One uncompressed message in its envelope. */
export function envelope(message: Uint8Array): Buffer {
  const framed = Buffer.allocUnsafe(envelopeHeaderBytes + message.byteLength);
  framed[0] = 0;
  framed.writeUInt32BE(message.byteLength, 1);
  framed.set(message, envelopeHeaderBytes);
  return framed;
}

/**
 * The one message of a unary call's body: the request on the server (`input`), the answer on
 * the client (`output`). An empty body is refused with `emptyCode`.
 */
export function unwrapEnvelope(
  body: Buffer,
  direction: "input" | "output",
  emptyCode: Code = Code.Unimplemented,
): Uint8Array {
  if (body.byteLength === 0) {
    throw new ConnectError(
      `protocol error: missing ${direction} message for unary method`,
      emptyCode,
    );
  }
  if (body.byteLength < envelopeHeaderBytes) {
    throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  }
  if ((body[0] & compressedFlag) === compressedFlag) {
    throw new ConnectError(
      "received compressed envelope, but do not know how to decompress",
      Code.Internal,
    );
  }
  const length = body.readUInt32BE(1);
  const end = envelopeHeaderBytes + length;
  if (body.byteLength < end) {
    throw new ConnectError(
      `protocol error: promised ${length} bytes in enveloped message, got ${body.byteLength - envelopeHeaderBytes} bytes`,
      Code.InvalidArgument,
    );
  }
  if (body.byteLength > end) {
    throw new ConnectError(
      `protocol error: received extra ${direction} message for unary method`,
      Code.Unimplemented,
    );
  }
  return body.subarray(envelopeHeaderBytes, end);
}
