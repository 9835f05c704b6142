import {
  constants,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import { create, isMessage, type Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createServiceImplSpec,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { createMethodSerializationLookup, type Serialization } from "@connectrpc/connect/protocol";
import {
  contentTypeProto,
  parseContentType,
  parseTimeout,
  setTrailerStatus,
} from "@connectrpc/connect/protocol-grpc";
import type { Logger } from "pino";
import { envelope, envelopeHeaderBytes, unwrapEnvelope } from "../rpc/grpc-wire.js";
import { toFetchHeaders } from "./fetch-headers.js";
import { invalidRequestMessage } from "./parse-errors.js";
import type { ServiceRegistration } from "./service-registration.js";

export interface GrpcUnaryHandlerOptions {
  logger: Logger;
  services: ServiceRegistration[];
  /** The interceptors Connect's router runs, in the same order. */
  interceptors: Interceptor[];
  contextValues: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => ContextValues;
  readMaxBytes?: number;
}

/** Serves the stream and returns true, or returns false and leaves it untouched. */
export type GrpcStreamHandler = (
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
) => boolean;

interface UnaryMethod {
  spec: MethodImplSpec & { kind: "unary" };
  input: Serialization<Message>;
  /** The enveloped answer for a handler's result. */
  frame(result: unknown): Buffer;
}

type AnyFn = Parameters<Interceptor>[0];

/** setTimeout fires at once above this; a deadline that far away is no deadline. */
const maxTimerMs = 2 ** 31 - 1;
const canceled = () => new ConnectError("the client closed the call", Code.Canceled);

/**
 * Unary calls in the plain gRPC protocol (binary, uncompressed: what grpc-js and Connect's gRPC
 * transport send by default) served straight on the HTTP/2 stream, through the same method
 * implementations, interceptors and serialization as Connect's router. Connect's Node handler
 * runs every call through a pipeline of async iterables and aborts a fresh signal with a
 * DOMException when the call ends, which held a no-op method to a fifth of what
 * `@grpc/grpc-js` serves on this machine (bench/grpc). Everything else (Connect and gRPC-Web protocols,
 * JSON, compression, streaming methods, unknown paths) is left to Connect.
 */
export function createGrpcUnaryHandler(options: GrpcUnaryHandlerOptions): GrpcStreamHandler {
  const { interceptors, logger } = options;
  const limits = { readMaxBytes: options.readMaxBytes ?? 0xffffffff, writeMaxBytes: 0xffffffff };
  const methods = new Map<string, UnaryMethod>();
  for (const { service, implementation } of options.services) {
    const specs = createServiceImplSpec(service, implementation).methods;
    for (const spec of Object.values(specs)) {
      if (spec.kind !== "unary") continue;
      const serialization = createMethodSerializationLookup(
        spec.method,
        undefined,
        undefined,
        limits,
      );
      const output = serialization.getO(true);
      const frameOf = (result: unknown) =>
        envelope(
          output.serialize(
            isMessage(result, spec.method.output)
              ? result
              : create(spec.method.output, result as Parameters<typeof create>[1]),
          ),
        );
      // As on REST (transcoder.ts): a frozen result (freezeResult) cannot change, so it is
      // encoded once however often a cache returns the same object.
      const frozenFrames = new WeakMap<object, Buffer>();
      methods.set(`/${service.typeName}/${spec.method.name}`, {
        spec,
        input: serialization.getI(true),
        frame(result) {
          if (typeof result !== "object" || result === null || !Object.isFrozen(result)) {
            return frameOf(result);
          }
          let frame = frozenFrames.get(result);
          if (frame === undefined) {
            frame = frameOf(result);
            frozenFrames.set(result, frame);
          }
          return frame;
        },
      });
    }
  }

  async function serve(
    method: UnaryMethod,
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    body: Buffer,
  ) {
    // The signal is made when someone asks for it (few handlers do), and a finished call leaves
    // it alone: aborting it would cost a DOMException and an event dispatch per call.
    let controller: AbortController | undefined;
    const signalController = () => {
      if (controller === undefined) controller = new AbortController();
      return controller;
    };
    const abort = (reason: ConnectError) => signalController().abort(reason);
    let done = false;
    stream.once("close", () => {
      if (!done) abort(canceled());
    });
    const timeout = parseTimeout(
      (headers["grpc-timeout"] as string | undefined) ?? null,
      Number.MAX_SAFE_INTEGER,
    );
    let timer: NodeJS.Timeout | undefined;
    const deadline = timeout.timeoutMs === undefined ? undefined : Date.now() + timeout.timeoutMs;
    if (timeout.timeoutMs !== undefined && timeout.timeoutMs <= maxTimerMs) {
      timer = setTimeout(
        () => abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)),
        timeout.timeoutMs,
      );
    }
    const requestHeader = toFetchHeaders(headers);
    const values = options.contextValues(stream, headers);
    const url = () =>
      `${stream.session?.encrypted ? "https" : "http"}://${headers[":authority"]}${headers[":path"]}`;
    const context: HandlerContext = {
      service: method.spec.method.parent,
      method: method.spec.method,
      requestMethod: "POST",
      protocolName: "grpc",
      get url() {
        return url();
      },
      get signal() {
        return signalController().signal;
      },
      timeoutMs: () => (deadline === undefined ? undefined : deadline - Date.now()),
      requestHeader,
      responseHeader: new Headers(),
      responseTrailer: new Headers(),
      values,
    };
    let responseHeader = context.responseHeader;
    let responseTrailer = context.responseTrailer;
    let frame: Buffer;
    try {
      if (timeout.error) throw timeout.error;
      const input = parseInput(method, unwrapEnvelope(body, "input"));
      const request: UnaryRequest = {
        stream: false,
        service: context.service,
        method: method.spec.method,
        requestMethod: "POST",
        get url() {
          return url();
        },
        get signal() {
          return context.signal;
        },
        header: requestHeader,
        contextValues: values,
        message: input,
      };
      // Connect's applyInterceptors, without turning the result into a message yet: `frame`
      // needs the handler's own object to find a frozen one. An interceptor that passed the
      // request on as it is leaves the handler the context as it is.
      const call = interceptors.reduceRight<AnyFn>(
        (next, interceptor) => interceptor(next),
        async (req) => ({
          stream: false,
          service: req.service,
          method: method.spec.method,
          header: context.responseHeader,
          trailer: context.responseTrailer,
          message: (await method.spec.impl(
            (req as UnaryRequest).message,
            req === request
              ? context
              : {
                  ...context,
                  requestHeader: req.header,
                  signal: req.signal,
                  values: req.contextValues,
                },
          )) as Message,
        }),
      );
      const res = (await call(request)) as UnaryResponse;
      responseHeader = res.header;
      responseTrailer = res.trailer;
      frame = method.frame(res.message);
    } catch (error) {
      done = true;
      clearTimeout(timer);
      // Trailers-only: the status travels in the one header block, as gRPC allows for errors.
      const trailer = setTrailerStatus(
        new Headers(responseTrailer),
        error instanceof ConnectError
          ? error
          : new ConnectError("internal error", Code.Internal, undefined, undefined, error),
      );
      send(stream, () =>
        stream.respond(toOutgoing(trailer, toOutgoing(responseHeader, responseHead())), {
          endStream: true,
        }),
      );
      return;
    }
    done = true;
    clearTimeout(timer);
    const trailer = toOutgoing(responseTrailer, { "grpc-status": "0" });
    send(stream, () => {
      stream.respond(toOutgoing(responseHeader, responseHead()), { waitForTrailers: true });
      stream.once("wantTrailers", () => stream.sendTrailers(trailer));
      stream.end(frame);
    });
  }

  /** Writes unless the client has gone; a header HTTP/2 refuses ends the stream instead. */
  function send(stream: ServerHttp2Stream, write: () => void) {
    if (stream.destroyed || stream.closed) return;
    try {
      write();
    } catch (error) {
      logger.error({ err: error }, "rpc response not sent");
      stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    }
  }

  return (stream, headers) => {
    const path = headers[":path"];
    const method = path === undefined ? undefined : methods.get(path);
    if (
      method === undefined ||
      headers[":method"] !== "POST" ||
      parseContentType(headers["content-type"] ?? null)?.binary !== true ||
      !isIdentity(headers["grpc-encoding"])
    ) {
      return false;
    }
    // The call is aborted from "close"; an "error" here (a reset from the peer) needs no more.
    stream.on("error", () => {});
    const chunks: Buffer[] = [];
    let received = 0;
    let refused = false;
    stream.on("data", (chunk: Buffer) => {
      if (refused) return;
      received += chunk.byteLength;
      if (received <= limits.readMaxBytes + envelopeHeaderBytes) {
        chunks.push(chunk);
        return;
      }
      refused = true;
      const trailer = setTrailerStatus(
        new Headers(),
        new ConnectError(
          `message size is larger than configured readMaxBytes ${limits.readMaxBytes}`,
          Code.ResourceExhausted,
        ),
      );
      send(stream, () => stream.respond(toOutgoing(trailer, responseHead()), { endStream: true }));
    });
    stream.once("end", () => {
      if (refused) return;
      // Whatever escapes the call's own error handling must not become an unhandled rejection,
      // which would end the process.
      serve(method, stream, headers, Buffer.concat(chunks, received)).catch((error) => {
        logger.error({ err: error }, "rpc failed outside its handler");
        if (!stream.destroyed) stream.close(constants.NGHTTP2_INTERNAL_ERROR);
      });
    });
    return true;
  };
}

/**
 * The request message, or InvalidArgument saying why the bytes are none (invalid UTF-8 in a
 * string, a wrong wire type, a truncated message, field number 0): the caller sent them, so the
 * fault is the caller's. Connect's serialization reports them as Internal. A message over the
 * size limit keeps its ResourceExhausted.
 */
function parseInput(method: UnaryMethod, bytes: Uint8Array): Message {
  try {
    return method.input.parse(bytes);
  } catch (error) {
    if (error instanceof ConnectError && error.code !== Code.Internal) throw error;
    const reason = error instanceof ConnectError ? error.rawMessage : String(error);
    throw new ConnectError(
      invalidRequestMessage(method.spec.method.input.typeName, reason),
      Code.InvalidArgument,
    );
  }
}

const responseHead = (): OutgoingHttpHeaders => ({
  ":status": 200,
  "content-type": contentTypeProto,
});

function isIdentity(encoding: string | string[] | undefined): boolean {
  return encoding === undefined || encoding === "identity";
}

function toOutgoing(headers: Headers, into: OutgoingHttpHeaders): OutgoingHttpHeaders {
  headers.forEach((value, name) => {
    into[name] = value;
  });
  return into;
}
