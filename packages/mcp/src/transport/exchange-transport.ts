import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  JSONRPCMessage,
  JSONRPCRequest,
  JSONRPCResponse,
  MessageExtraInfo,
  RequestId,
} from "@modelcontextprotocol/sdk/types.js";

/** Where the messages of one HTTP exchange go: the answers and the notifications sent for it. */
export interface ExchangeSink {
  /** A notification (progress, log) the server sent while handling one of the requests. */
  notify(message: JSONRPCMessage): void;
  /** Every request of the exchange has been answered; the answers in the requests' order. */
  answered(responses: JSONRPCMessage[]): void;
}

/**
 * An SDK transport a pooled server stays connected to across HTTP requests. Each request hands
 * its messages to `exchange`, and the server's answers to those requests come back to that
 * request's sink. The SDK's Streamable HTTP transport serves one HTTP request per instance and
 * only through a Web Request and Response; connecting and closing one per request and bridging
 * Node's request and response to Web ones cost more CPU than the MCP handling itself.
 *
 * A server connected to it serves one exchange at a time (the pool hands it to one request at a
 * time), so request ids cannot collide. What the server sends outside an exchange (a
 * notification not related to a request, or a late answer to a request whose client left) goes
 * nowhere, as on a stateless Streamable HTTP endpoint without a GET stream.
 */
export interface ExchangeTransport extends Transport {
  exchange(messages: JSONRPCMessage[], extra: MessageExtraInfo, sink: ExchangeSink): void;
}

// Told apart by shape, not by the SDK's schema guards, which validate the whole message again
// (a result with every recalled memory in it): what reaches the server was validated against
// JSONRPCMessageSchema at the POST, and what it sends the SDK built itself.
const isResponse = (message: JSONRPCMessage): message is JSONRPCResponse =>
  "result" in message || "error" in message;
const isRequest = (message: JSONRPCMessage): message is JSONRPCRequest =>
  "id" in message && "method" in message;

export function createExchangeTransport(): ExchangeTransport {
  let pending: Map<RequestId, JSONRPCMessage | undefined> | undefined;
  let sink: ExchangeSink | undefined;
  let closed = false;

  const transport: ExchangeTransport = {
    async start() {},
    async close() {
      if (closed) return;
      closed = true;
      pending = undefined;
      sink = undefined;
      transport.onclose?.();
    },
    async send(message, options) {
      const answer = isResponse(message);
      const requestId = answer ? message.id : options?.relatedRequestId;
      if (!sink || !pending || requestId === undefined || !pending.has(requestId)) return;
      if (!answer) {
        sink.notify(message);
        return;
      }
      pending.set(requestId, message);
      const responses = [...pending.values()];
      if (responses.some((response) => response === undefined)) return;
      const done = sink;
      pending = undefined;
      sink = undefined;
      done.answered(responses as JSONRPCMessage[]);
    },
    exchange(messages, extra, to) {
      if (closed) throw new Error("the MCP server's transport is closed");
      const requests = messages.filter(isRequest);
      if (requests.length > 0) {
        pending = new Map(requests.map((request) => [request.id, undefined]));
        sink = to;
      }
      for (const message of messages) transport.onmessage?.(message, extra);
      if (requests.length === 0) to.answered([]);
    },
  };
  return transport;
}
