import { constants, type IncomingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import type { ConnectError } from "@connectrpc/connect";
import { errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";

const grpcContentType = /^application\/grpc(?:-web)?(?:[+;]|$)/i;

/**
 * Answers an HTTP/2 request the host refuses before any handler saw it (headers too large, a
 * body not sent in time), in the protocol the client speaks: gRPC and gRPC-Web get a
 * trailers-only status, Connect (and anything else) the HTTP status with a Connect error body.
 * A stream whose answer has begun can only be cut.
 */
export function refuseStream(
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  error: ConnectError,
  httpStatus: number,
): void {
  if (stream.destroyed || stream.closed) return;
  if (stream.headersSent) {
    stream.close(constants.NGHTTP2_CANCEL);
    return;
  }
  const contentType = headers["content-type"] ?? "";
  try {
    if (grpcContentType.test(contentType)) {
      const head: Record<string, string | number> = { ":status": 200, "content-type": contentType };
      setTrailerStatus(new Headers(), error).forEach((value, name) => {
        head[name] = value;
      });
      stream.respond(head, { endStream: true });
    } else {
      stream.respond({ ":status": httpStatus, "content-type": "application/json" });
      stream.end(errorToJsonBytes(error, {}));
    }
  } catch {
    // The session went away between the check and the write: nothing is left to answer.
    return;
  }
  // What the client still sends is read and dropped, so the session's flow-control window is
  // not left full, and once the answer is out the client is told to stop sending (RST_STREAM
  // NO_ERROR after a complete response, as RFC 9113 §8.1 allows).
  stream.resume();
  stream.once("finish", () => {
    if (!stream.closed) stream.close(constants.NGHTTP2_NO_ERROR);
  });
}
