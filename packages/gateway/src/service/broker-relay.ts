import { brokerV1, gatewayV1 } from "@atrium/api";
import { callerAddressKey } from "@atrium/kit";
import type { CallOptions, HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { BrokerClient } from "../broker/broker-client.js";

export type GatewayHandlers = ServiceImpl<typeof gatewayV1.GatewayService>;

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

type BrokerCall = (request: unknown, options: CallOptions) => Promise<unknown>;

/**
 * Handlers for gateway methods that declare the request and answer of the broker's method of the
 * same name (gateway.proto): the request goes to the broker as it came and the broker's answer is
 * the gateway's. Checked once, here, so a contract edit that gives the gateway a message of its
 * own for one of them fails at start-up rather than relaying the wrong message.
 */
export function relays<Name extends keyof GatewayHandlers & keyof BrokerClient & string>(
  broker: BrokerClient,
  names: readonly Name[],
): Pick<GatewayHandlers, Name> {
  const handlers = names.map((name) => {
    const method = gatewayV1.GatewayService.method[name];
    const target = brokerV1.BrokerService.method[name];
    if (
      method.input.typeName !== target.input.typeName ||
      method.output.typeName !== target.output.typeName
    ) {
      throw new Error(
        `${method.name} does not declare the messages of the broker's ${target.name}`,
      );
    }
    const call = broker[name] as BrokerCall;
    return [
      name,
      (request: unknown, context: HandlerContext) => call(request, brokerCall(context)),
    ];
  });
  return Object.fromEntries(handlers) as Pick<GatewayHandlers, Name>;
}
