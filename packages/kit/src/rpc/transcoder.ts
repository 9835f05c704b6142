import {
  create,
  type DescMethod,
  type DescService,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import type { ContextValues, HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AtriumError, Code, restError, unimplemented } from "../errors.js";
import { type HttpBinding, readHttpBindings } from "./http-rule.js";
import { createMessageJsonWriter } from "./json-writer.js";
import { parsePathTemplate, toFastifyRoutePath } from "./path-template.js";
import { readMessageJson, writeMessageJson } from "./proto-json.js";
import { createRequestBinder, type HttpRequestParts } from "./request-binding.js";
import { createRestHandlerContext } from "./rest-context.js";

export interface RestRoutesOptions {
  /** Per-call context values (e.g. the caller's identity), as the gRPC side supplies them. */
  contextValues?: (request: FastifyRequest) => ContextValues | Promise<ContextValues>;
  /** Observes every call before its handler runs (metrics, access logs). */
  onCall?: (method: DescMethod, request: FastifyRequest) => void;
}

type UnaryHandler = (request: unknown, context: HandlerContext) => unknown;

/**
 * Mounts a Fastify route for every google.api.http binding of the service, calling the same
 * implementation object the gRPC transport serves. Methods without an annotation are gRPC-only;
 * an annotated streaming method, or a binding that cannot be served, fails start-up.
 */
export function registerRestRoutes<S extends DescService>(
  app: FastifyInstance,
  service: S,
  implementation: Partial<ServiceImpl<S>>,
  options: RestRoutesOptions = {},
): void {
  for (const method of service.methods) {
    const bindings = readHttpBindings(method);
    if (bindings.length === 0) continue;
    if (method.methodKind !== "unary") {
      throw new Error(
        `${service.typeName}.${method.name}: ${method.methodKind} methods have no REST mapping; remove its google.api.http option`,
      );
    }
    const handler = (implementation as Record<string, unknown>)[method.localName];
    const call: UnaryHandler =
      typeof handler === "function"
        ? (request, context) => handler.call(implementation, request, context)
        : () => {
            throw unimplemented(`${service.typeName}.${method.name} is not implemented`);
          };
    for (const binding of bindings) {
      mountBinding(app, service, method, binding, call, options);
    }
  }
}

function mountBinding(
  app: FastifyInstance,
  service: DescService,
  method: DescMethod,
  binding: HttpBinding,
  call: UnaryHandler,
  options: RestRoutesOptions,
) {
  let route: ReturnType<typeof toFastifyRoutePath>;
  let bindRequest: ReturnType<typeof createRequestBinder>;
  try {
    route = toFastifyRoutePath(parsePathTemplate(binding.path));
    bindRequest = createRequestBinder(method.input, binding, route);
  } catch (error) {
    throw new Error(
      `${service.typeName}.${method.name} (${binding.httpMethod} ${binding.path}): ${(error as Error).message}`,
    );
  }
  const responseField =
    binding.responseBody === ""
      ? undefined
      : method.output.fields.find((f) => f.name === binding.responseBody);
  if (binding.responseBody !== "" && responseField === undefined) {
    throw new Error(
      `${service.typeName}.${method.name}: response_body "${binding.responseBody}" is no field`,
    );
  }

  const writeOutput =
    createMessageJsonWriter(method.output) ??
    ((result: unknown) =>
      writeMessageJson(
        method.output,
        create(method.output, result as MessageInitShape<typeof method.output>),
      ) as Record<string, unknown>);

  const serialize = (result: unknown): string => {
    const json = writeOutput(result) as Record<string, unknown>;
    const payload = responseField === undefined ? json : (json[responseField.name] ?? null);
    // Serialized here: a string response_body must still go out as a JSON string.
    return JSON.stringify(payload);
  };
  // A frozen result (freezeResult) cannot change, so its JSON is written once, however often it
  // is returned: a handler serving an unchanged value from a cache returns the same object.
  const serializedFrozen = new WeakMap<object, string>();

  app.route({
    method: binding.httpMethod,
    url: route.url,
    config: {
      paramNames: Object.fromEntries(route.variables.map((v) => [v.param, v.fieldPath.join(".")])),
      // The host's authenticator applies a service's rules about an RPC to its REST routes too.
      procedure: `/${service.typeName}/${method.name}`,
    },
    errorHandler: (error, request, reply) => sendError(fromFastifyError(error), request, reply),
    handler: async (request, reply) => {
      options.onCall?.(method, request);
      // Awaited only when it is a promise: awaiting a plain value costs two promises and a turn
      // of the microtask queue per request (and more where AsyncLocalStorage tracks promises).
      const pending = options.contextValues?.(request);
      const values = pending instanceof Promise ? await pending : pending;
      const input = readMessageJson(method.input, bindRequest(request as HttpRequestParts));
      const { context, responseHeader, complete } = createRestHandlerContext({
        service,
        method,
        request,
        reply,
        contextValues: values,
      });
      try {
        const result = await call(input, context);
        let body: string | undefined;
        if (typeof result === "object" && result !== null && Object.isFrozen(result)) {
          body = serializedFrozen.get(result);
          if (body === undefined) {
            body = serialize(result);
            serializedFrozen.set(result, body);
          }
        } else {
          body = serialize(result);
        }
        const headers = responseHeader();
        if (headers) for (const [name, value] of headers) reply.header(name, value);
        return reply.type("application/json").send(body);
      } finally {
        complete();
      }
    },
  });
}

function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const { status, body, headers } = restError(error);
  // Only unexpected failures are logged; their cause never reaches the client.
  if (status === 500) request.log.error({ err: error }, "REST call failed");
  return reply.code(status).headers(headers).type("application/json").send(body);
}

/**
 * Body parsing fails inside Fastify (bad JSON, body too large, unsupported media type); keep its
 * status and message. Other errors carrying a statusCode (an upstream client's, say) stay opaque.
 */
function fromFastifyError(error: FastifyError): unknown {
  const status = error.statusCode;
  // ConnectError (and so AtriumError) has a numeric code; Fastify's are "FST_…" strings.
  const fromFastify = typeof error.code === "string" && error.code.startsWith("FST_");
  if (!fromFastify || status === undefined || status < 400 || status >= 500) return error;
  const code = status === 413 ? Code.ResourceExhausted : Code.InvalidArgument;
  return new AtriumError(code, error.message, { httpStatus: status });
}
