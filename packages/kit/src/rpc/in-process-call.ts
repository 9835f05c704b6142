import {
  create,
  type DescMessage,
  type DescMethodUnary,
  type DescService,
  type JsonValue,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { type ContextValues, createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import { writeMessageJson } from "./proto-json.js";

/** What in-process calls report in `HandlerContext.protocolName`. */
const inProcessProtocolName = "in-process";

export interface InProcessCallOptions {
  /** What the transports would have put there (the caller's resolved address, say). */
  contextValues?: ContextValues;
  /** Request headers the handler reads (the caller's User-Agent, say). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

type UnaryHandler<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  context: HandlerContext,
) => Promise<MessageInitShape<O>> | MessageInitShape<O>;

/**
 * Calls one unary handler of a service inside the process and answers the REST transport's JSON
 * of its result: for a service that uses its own handlers (the gateway's MCP endpoint) without a
 * loop through HTTP. The caller has been authenticated already; nothing is checked again. A
 * handler's error is thrown as it was thrown.
 */
export async function callInProcess<I extends DescMessage, O extends DescMessage>(
  service: DescService,
  method: DescMethodUnary<I, O>,
  handler: UnaryHandler<I, O>,
  input: MessageInitShape<I>,
  options: InProcessCallOptions = {},
): Promise<JsonValue> {
  const context = createHandlerContext({
    service,
    method,
    protocolName: inProcessProtocolName,
    requestMethod: "POST",
    url: `/${service.typeName}/${method.name}`,
    requestSignal: options.signal,
    requestHeader: options.headers,
    contextValues: options.contextValues,
  });
  try {
    const result = await handler(create(method.input, input), context);
    return writeMessageJson(method.output, create(method.output, result));
  } finally {
    context.abort();
  }
}
