import { brokerV1 } from "@atrium/api";
import {
  AtriumError,
  Code,
  fillPathTemplate,
  parsePathTemplate,
  readHttpBindings,
} from "@atrium/kit";
import { deadlineSignal } from "@atrium/sdk";
import {
  create,
  type DescMethod,
  fromJson,
  type JsonObject,
  type JsonValue,
  toJson,
} from "@bufbuild/protobuf";
import type { CallOptions, Client } from "@connectrpc/connect";
import { fromBrokerRestError } from "./broker-errors.js";

export type BrokerClient = Client<typeof brokerV1.BrokerService>;

export interface BrokerRestClientOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

type UnaryCall = (request: unknown, options?: CallOptions) => Promise<unknown>;

/**
 * The broker over REST, every call built from the method's google.api.http binding (path
 * variables from the request, the rest as query or JSON body), so no route is written twice.
 */
export function createBrokerRestClient(options: BrokerRestClientOptions): BrokerClient {
  const client: Record<string, UnaryCall> = {};
  for (const method of brokerV1.BrokerService.methods) {
    client[method.localName] = restCall(method, options);
  }
  return client as unknown as BrokerClient;
}

function restCall(method: DescMethod, options: BrokerRestClientOptions): UnaryCall {
  const [binding] = readHttpBindings(method);
  if (binding === undefined) {
    return async () => {
      throw new AtriumError(Code.Unimplemented, `${method.name} has no REST binding`);
    };
  }
  const template = parsePathTemplate(binding.path);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  return async (init, call = {}) => {
    const json = toJson(method.input, create(method.input, init as never), {
      useProtoFieldName: true,
    }) as JsonObject;
    // A field bound by the path is taken out of what goes into the query or body.
    const path = fillPathTemplate(template, (fieldPath) =>
      String(takeField(json, fieldPath) ?? ""),
    );
    const url = new URL(`${options.baseUrl}${path}`);
    let body: string | undefined;
    if (binding.body === "*") body = JSON.stringify(json);
    else if (binding.body !== "") body = JSON.stringify(json[binding.body] ?? {});
    else for (const [name, value] of Object.entries(json)) appendQuery(url, name, value);

    const headers = new Headers(call.headers);
    headers.set("x-api-key", options.apiKey);
    headers.set("accept", "application/json");
    if (body !== undefined) headers.set("content-type", "application/json");

    let response: Response;
    try {
      response = await fetchImpl(url, {
        method: binding.httpMethod,
        headers,
        body,
        signal: deadlineSignal(call.timeoutMs ?? options.timeoutMs, call.signal),
      });
    } catch (error) {
      throw new AtriumError(Code.Unavailable, "the broker is unreachable", { cause: error });
    }
    const text = await response.text();
    const parsed = text === "" ? {} : safeJson(text);
    if (!response.ok) {
      throw fromBrokerRestError(response.status, parsed, response.headers.get("retry-after"));
    }
    return fromJson(method.output, parsed as JsonValue, { ignoreUnknownFields: true });
  };
}

/** Removes the field at a proto-JSON path from the request and hands back its value. */
function takeField(json: JsonObject, fieldPath: readonly string[]): JsonValue | undefined {
  let parent: JsonObject = json;
  for (const name of fieldPath.slice(0, -1)) {
    const next = parent[name];
    if (next === null || typeof next !== "object" || Array.isArray(next)) return undefined;
    parent = next;
  }
  const leaf = fieldPath[fieldPath.length - 1];
  const value = parent[leaf];
  delete parent[leaf];
  return value;
}

function appendQuery(url: URL, name: string, value: JsonValue): void {
  if (Array.isArray(value)) {
    for (const item of value) url.searchParams.append(name, String(item));
  } else if (value !== null && typeof value !== "object") {
    url.searchParams.set(name, String(value));
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 200) };
  }
}
