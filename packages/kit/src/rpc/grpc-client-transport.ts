import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  connect,
  constants,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type SecureClientSessionOptions,
} from "node:http2";
import { create, type DescMessage, fromBinary, isMessage, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type Interceptor,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import {
  codeFromHttpStatus,
  contentTypeProto,
  findTrailerError,
  parseContentType,
  validateTrailer,
} from "@connectrpc/connect/protocol-grpc";
import { traceClientCalls } from "../observability/tracing.js";
import { toFetchHeaders } from "../server/fetch-headers.js";
import { envelope, unwrapEnvelope } from "./grpc-wire.js";

export interface GrpcClientTransportOptions {
  /** http: or https: origin of the gRPC port, with an optional path prefix. */
  baseUrl: string;
  /** Used when a call names no timeout; a timeout ≤ 0 means none. */
  defaultTimeoutMs?: number;
  /** Run around every call, in order, as Connect's transports run them. */
  interceptors?: Interceptor[];
  /** CA, client certificate and key for https: base URLs (else the system's CAs). */
  tls?: Pick<SecureClientSessionOptions, "ca" | "cert" | "key">;
  /**
   * After a deadline the session is pinged; no answer in this time means the connection is dead
   * (a peer gone without a FIN) and the next call dials a new one. Default 5 s.
   */
  pingTimeoutMs?: number;
}

export interface GrpcClientTransport extends Transport {
  /** Drops the HTTP/2 session; a later call dials a new one. */
  close(): void;
}

/** One HTTP/2 connection and the calls on it: it holds the process open only while busy. */
interface Session {
  h2: ClientHttp2Session;
  active: number;
  pinging: boolean;
}

type UnaryNext = (request: UnaryRequest) => Promise<UnaryResponse>;

/** setTimeout fires at once above this; a deadline that far away is no deadline. */
const maxTimerMs = 2 ** 31 - 1;
const neverAborted = new AbortController().signal;

/**
 * Unary calls in the plain gRPC protocol (binary, uncompressed) on one kept-alive HTTP/2
 * session, as a Connect Transport so generated clients use it unchanged. Connect's Node transport
 * runs each call through async-iterable pipelines, a linked AbortController per call and a
 * session manager with its own timers, which cost 0.2–0.7 ms of CPU per call (bench/gateway); this
 * one writes the frame, reads the answer and trailers, and maps them to what Connect's gRPC
 * transport returns and throws (same codes, messages and error metadata). Streaming methods are
 * refused with Unimplemented: no platform service streams over gRPC.
 */
export function createGrpcClientTransport(
  options: GrpcClientTransportOptions,
): GrpcClientTransport {
  const base = new URL(options.baseUrl);
  const origin = base.origin;
  const pathPrefix = base.pathname.replace(/\/$/, "");
  // Outermost, so the caller's own interceptors run inside the call's span.
  const interceptors = [traceClientCalls(base.host), ...(options.interceptors ?? [])];
  const pingTimeoutMs = options.pingTimeoutMs ?? 5_000;
  let current: Session | undefined;
  let closed = false;

  function session(): Session {
    if (current && !current.h2.closed && !current.h2.destroyed) return current;
    const h2 = connect(origin, options.tls);
    const opened: Session = { h2, active: 0, pinging: false };
    const forget = () => {
      if (current === opened) current = undefined;
    };
    // A failed dial or a broken connection reaches every stream on it as the stream's own error.
    h2.on("error", () => {});
    h2.once("close", forget);
    // Node ends the session itself once its streams finish; new calls need a new one at once.
    h2.once("goaway", forget);
    h2.unref();
    current = opened;
    return opened;
  }

  /** A deadline may mean a dead peer: keep the session only if it still answers a ping. */
  function probe(opened: Session) {
    if (opened.pinging || opened.h2.destroyed) return;
    opened.pinging = true;
    const timer = setTimeout(() => opened.h2.destroy(), pingTimeoutMs);
    timer.unref();
    try {
      opened.h2.ping((error) => {
        clearTimeout(timer);
        opened.pinging = false;
        if (error) opened.h2.destroy();
      });
    } catch {
      clearTimeout(timer);
      opened.h2.destroy();
    }
  }

  const send: UnaryNext = (request) =>
    new Promise<UnaryResponse>((resolve, reject) => {
      const { method, signal } = request;
      const timeoutMs = timeoutOf(request.header);
      if (signal.aborted) {
        reject(ConnectError.from(signal.reason, Code.Canceled));
        return;
      }
      const headers: OutgoingHttpHeaders = {
        ":method": "POST",
        ":path": `${pathPrefix}/${method.parent.typeName}/${method.name}`,
      };
      request.header.forEach((value, name) => {
        headers[name] = value;
      });
      headers["content-type"] = contentTypeProto;
      headers.te = "trailers";
      const body = envelope(toBinary(method.input, request.message));

      let opened = session();
      let stream: ClientHttp2Stream;
      try {
        stream = opened.h2.request(headers);
      } catch (error) {
        // A session that is going away refuses new streams before its events arrive; the call
        // was not sent, so it goes once on a new session. Anything else is this call's fault.
        if (!sessionGone(error)) {
          reject(ConnectError.from(error, Code.Internal));
          return;
        }
        if (current === opened) current = undefined;
        opened = session();
        try {
          stream = opened.h2.request(headers);
        } catch (again) {
          reject(transportError(again));
          return;
        }
      }
      if (opened.active++ === 0) opened.h2.ref();

      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      let responseHeaders: IncomingHttpHeaders | undefined;
      let trailers: IncomingHttpHeaders | undefined;
      let streamError: unknown;
      const chunks: Buffer[] = [];
      let received = 0;

      const finish = (error: ConnectError | undefined, response?: UnaryResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (signal !== neverAborted) signal.removeEventListener("abort", onAbort);
        if (--opened.active === 0) opened.h2.unref();
        if (error) reject(error);
        else resolve(response as UnaryResponse);
      };
      const cancel = (error: ConnectError) => {
        if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
        finish(error);
      };
      const onAbort = () => cancel(ConnectError.from(signal.reason, Code.Canceled));
      if (signal !== neverAborted) signal.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== undefined && timeoutMs <= maxTimerMs) {
        timer = setTimeout(() => {
          cancel(new ConnectError("the operation timed out", Code.DeadlineExceeded));
          probe(opened);
        }, timeoutMs);
      }

      stream.on("response", (h) => {
        responseHeaders = h;
      });
      stream.on("trailers", (t) => {
        trailers = t;
      });
      stream.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.byteLength;
      });
      stream.on("error", (error) => {
        streamError = error;
      });
      stream.on("close", () => {
        if (settled) return;
        try {
          const header = responseHeaders && toFetchHeaders(responseHeaders);
          if (header === undefined || (trailers === undefined && stream.rstCode !== 0)) {
            finish(closedError(stream.rstCode, streamError));
            return;
          }
          const trailer = trailers ? toFetchHeaders(trailers) : new Headers();
          const answer = Buffer.concat(chunks, received);
          finish(undefined, {
            stream: false,
            service: method.parent,
            method,
            header,
            trailer,
            message: readAnswer(
              method.output,
              Number(responseHeaders?.[":status"]),
              header,
              trailer,
              answer,
            ),
          } as UnaryResponse);
        } catch (error) {
          finish(ConnectError.from(error, Code.Internal));
        }
      });
      stream.end(body);
    });

  const call = interceptors.reduceRight<UnaryNext>(
    (next, interceptor) => interceptor(next as Parameters<Interceptor>[0]) as UnaryNext,
    send,
  );

  return {
    unary(method, signal, timeoutMs, header, input, contextValues) {
      if (closed) {
        return Promise.reject(new ConnectError("the transport is closed", Code.Unavailable));
      }
      const timeout = timeoutMs === undefined ? options.defaultTimeoutMs : timeoutMs;
      const requestHeader = new Headers(header);
      if (timeout !== undefined && timeout > 0) requestHeader.set("grpc-timeout", `${timeout}m`);
      const message = isMessage(input, method.input) ? input : create(method.input, input);
      return call({
        stream: false,
        service: method.parent,
        method,
        requestMethod: "POST",
        url: `${origin}${pathPrefix}/${method.parent.typeName}/${method.name}`,
        signal: signal ?? neverAborted,
        header: requestHeader,
        contextValues: contextValues ?? createContextValues(),
        message,
      } as UnaryRequest) as never;
    },
    stream() {
      return Promise.reject(
        new ConnectError(
          "streaming methods are not supported by this transport",
          Code.Unimplemented,
        ),
      );
    },
    close() {
      closed = true;
      current?.h2.destroy();
      current = undefined;
    },
  };
}

function sessionGone(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === "ERR_HTTP2_GOAWAY_SESSION" || code === "ERR_HTTP2_INVALID_SESSION";
}

/** The deadline an interceptor may have changed, from the header the server will read. */
function timeoutOf(header: Headers): number | undefined {
  const value = header.get("grpc-timeout");
  if (value === null) return undefined;
  const ms = Number.parseInt(value, 10);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The one answer of a unary call, or the error the status says, as Connect's gRPC transport. */
function readAnswer(
  output: DescMessage,
  status: number,
  header: Headers,
  trailer: Headers,
  body: Buffer,
) {
  if (status !== 200) {
    throw new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status), header);
  }
  const contentType = header.get("content-type");
  if (parseContentType(contentType)?.binary !== true) {
    throw new ConnectError(`unsupported content type ${contentType}`, Code.Unknown);
  }
  const encoding = header.get("grpc-encoding");
  if (encoding !== null && encoding !== "identity") {
    throw new ConnectError(`unsupported response encoding "${encoding}"`, Code.Internal, header);
  }
  // Trailers-only: the status came in the one header block.
  const headerError = findTrailerError(header);
  if (headerError) throw headerError;
  validateTrailer(trailer, header);
  // An empty answer with a status is a method the server does not have.
  const emptyCode =
    header.has("grpc-status") || trailer.has("grpc-status") ? Code.Unimplemented : Code.Unknown;
  return fromBinary(output, unwrapEnvelope(body, "output", emptyCode));
}

/**
 * A stream that ended without an answer: a reset from the peer (codes as in gRPC's HTTP/2
 * mapping), or a connection that failed here, whose Node error stays the cause for callers that
 * tell transport failures from answers.
 */
function closedError(rstCode: number, cause: unknown): ConnectError {
  const reset = resetCodes[rstCode];
  const local = (cause as { code?: unknown } | undefined)?.code !== "ERR_HTTP2_STREAM_ERROR";
  if (reset !== undefined && !(local && cause !== undefined)) {
    return new ConnectError(
      `http/2 stream closed with error code ${rstCode}`,
      reset,
      undefined,
      undefined,
      cause,
    );
  }
  return transportError(cause ?? new Error("http/2 stream closed without a response"));
}

function transportError(cause: unknown): ConnectError {
  if (cause instanceof ConnectError) return cause;
  const message = cause instanceof Error ? cause.message : String(cause);
  return new ConnectError(message, Code.Unavailable, undefined, undefined, cause);
}

const resetCodes: Record<number, Code> = {
  [constants.NGHTTP2_PROTOCOL_ERROR]: Code.Internal,
  [constants.NGHTTP2_INTERNAL_ERROR]: Code.Internal,
  [constants.NGHTTP2_FLOW_CONTROL_ERROR]: Code.Internal,
  [constants.NGHTTP2_SETTINGS_TIMEOUT]: Code.Internal,
  [constants.NGHTTP2_FRAME_SIZE_ERROR]: Code.Internal,
  [constants.NGHTTP2_COMPRESSION_ERROR]: Code.Internal,
  [constants.NGHTTP2_CONNECT_ERROR]: Code.Internal,
  [constants.NGHTTP2_REFUSED_STREAM]: Code.Unavailable,
  [constants.NGHTTP2_CANCEL]: Code.Canceled,
  [constants.NGHTTP2_ENHANCE_YOUR_CALM]: Code.ResourceExhausted,
  [constants.NGHTTP2_INADEQUATE_SECURITY]: Code.PermissionDenied,
  [constants.NGHTTP2_HTTP_1_1_REQUIRED]: Code.PermissionDenied,
};
