import { brokerV1 } from "@atrium/api";
import { callerAddressKey } from "@atrium/kit";
import type { DescMethod, DescService, Message } from "@bufbuild/protobuf";
import type { CallOptions, HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { BrokerClient } from "../broker/broker-client.js";
import { bridgeOf } from "./message-bridge.js";

/**
 * What the broker should record about the caller, on whichever transport reaches it (REST header
 * or gRPC metadata). The address is the one the host resolved, never the caller's own
 * X-Forwarded-For; the broker believes it only when the gateway is one of its TRUSTED_PROXIES.
 */
export function brokerCall(context: HandlerContext): CallOptions {
  const headers = new Headers();
  const ip = context.values.get(callerAddressKey);
  if (ip) headers.set("x-forwarded-for", ip);
  const userAgent = context.requestHeader.get("user-agent");
  if (userAgent) headers.set("user-agent", userAgent);
  return { signal: context.signal, headers };
}

type Handler = (request: unknown, context: HandlerContext) => Promise<unknown>;
type BrokerCall = (request: unknown, options: CallOptions) => Promise<unknown>;

/**
 * The handler of a gateway method that the broker's method of the same name serves with the same
 * fields: the request and the answer are copied field by field (checked once, here).
 */
export function relay(broker: BrokerClient, method: DescMethod): Handler {
  const target = brokerV1.BrokerService.methods.find((m) => m.localName === method.localName);
  if (!target) throw new Error(`the broker has no method ${method.name} to relay to`);
  const call = (broker as unknown as Record<string, BrokerCall>)[target.localName];
  const request = bridgeOf(method.input, target.input);
  const answer = bridgeOf(target.output, method.output);
  return async (message, context) =>
    answer((await call(request(message as Message), brokerCall(context))) as Message);
}

/** Handlers for the named methods of a service, each relayed to the broker's method of its name. */
export function relays<
  Service extends DescService,
  Name extends keyof ServiceImpl<Service> & string,
>(
  broker: BrokerClient,
  service: Service,
  names: readonly Name[],
): Pick<ServiceImpl<Service>, Name> {
  const handlers = names.map((name) => {
    const method = service.methods.find((candidate) => candidate.localName === name);
    if (!method) throw new Error(`${service.typeName} has no method ${name}`);
    return [name, relay(broker, method)];
  });
  return Object.fromEntries(handlers) as Pick<ServiceImpl<Service>, Name>;
}
