import { toFetchHeaders } from "@atrium/kit";
import type { FetchLike } from "@atrium/sdk";
import type { FastifyInstance, HTTPMethods } from "fastify";

/** Base URL of the gateway as its in-process SDK client sees it; `.invalid` never resolves. */
export const inProcessBaseUrl = "http://atrium-gateway.invalid";

export interface InProcessCaller {
  /** The address the host resolved for the MCP request; the allowlist sees it again. */
  remoteAddress: string;
  /** Recorded by the broker's audit log with every token it hands out. */
  userAgent: string;
}

/**
 * A fetch for the SDK's gateway client inside the gateway: calls to the gateway itself run through
 * Fastify's injection (the same hooks, key check and handlers as a network call, no loopback
 * socket, so ALLOWED_CIDRS need not list the gateway); any other URL is a real request, as the
 * SDK's fetchers send to the provider.
 */
export function inProcessFetch(app: FastifyInstance, caller: InProcessCaller): FetchLike {
  const origin = new URL(inProcessBaseUrl).origin;
  return async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.origin !== origin) return fetch(input, init);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    headers["user-agent"] = caller.userAgent;
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const answer = await app.inject({
      method: request.method as HTTPMethods,
      url: `${url.pathname}${url.search}`,
      headers,
      payload: body,
      remoteAddress: caller.remoteAddress,
    });
    return new Response(answer.rawPayload.byteLength > 0 ? answer.rawPayload : null, {
      status: answer.statusCode,
      headers: toFetchHeaders(answer.headers),
    });
  };
}
