import {
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  ScalarType,
} from "@bufbuild/protobuf";
import { AtriumError, Code, invalidArgument } from "../errors.js";
import type { HttpBinding } from "./http-rule.js";
import type { FastifyRoutePath } from "./path-template.js";

/** The parts of an HTTP request that carry request fields, as Fastify hands them over. */
export interface HttpRequestParts {
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  body: unknown;
}

/**
 * Assembles the proto3 JSON of the request message from path variables, query parameters and the
 * body, so one strict parse validates every source and names fields the same way. Path variables
 * win over the body, as in the google.api.http rules.
 */
export type RequestBinder = (parts: HttpRequestParts) => JsonObject;

/** Validates a binding against the request message; throws at start-up when it cannot be served. */
export function createRequestBinder(
  input: DescMessage,
  binding: HttpBinding,
  route: FastifyRoutePath,
): RequestBinder {
  const variables = route.variables.map(({ param, fieldPath }) => {
    const fields = resolveFieldPath(input, fieldPath);
    if (fields === undefined) throw new Error(`path variable "${fieldPath.join(".")}" is no field`);
    if (!acceptsText(fields[fields.length - 1], false)) {
      throw new Error(`path variable "${fieldPath.join(".")}" must be a singular scalar field`);
    }
    return { param, fields, name: fieldPath.join(".") };
  });
  let bodyTarget: DescField | undefined;
  if (binding.body !== "" && binding.body !== "*") {
    bodyTarget = input.fields.find((f) => f.name === binding.body);
    if (bodyTarget === undefined) throw new Error(`body field "${binding.body}" is no field`);
  }

  const bindQuery = (json: JsonObject, key: string, raw: string | string[]) => {
    const fields = resolveFieldPath(input, key.split("."));
    if (fields === undefined) throw invalidArgument(`unknown query parameter "${key}"`);
    const name = fields.map((f) => f.name).join(".");
    const boundBy = variables.find((v) => overlaps(v.name, name));
    if (boundBy !== undefined) {
      throw invalidArgument(`query parameter "${key}" sets "${boundBy.name}", bound by the path`);
    }
    if (bodyTarget !== undefined && overlaps(bodyTarget.name, name)) {
      throw invalidArgument(
        `query parameter "${key}" sets "${bodyTarget.name}", bound by the body`,
      );
    }
    const leaf = fields[fields.length - 1];
    const repeated = leaf.fieldKind === "list";
    if (!settableFromQuery(leaf)) {
      throw invalidArgument(`query parameter "${key}": field "${name}" cannot be set from a query`);
    }
    const values = Array.isArray(raw) ? raw : [raw];
    if (!repeated && values.length > 1) {
      throw invalidArgument(`query parameter "${key}" given more than once`);
    }
    const converted = values.map((value) => textToJson(leaf, value));
    setAt(json, fields, repeated ? converted : converted[0]);
  };

  return ({ params, query, body }) => {
    const json: JsonObject = {};
    if (binding.body === "*") {
      Object.assign(json, requireBodyObject(body));
    } else if (bodyTarget !== undefined && body !== undefined) {
      requireJsonBody(body);
      json[bodyTarget.name] = body as JsonValue;
    }
    if (binding.body !== "*") {
      for (const [key, raw] of Object.entries(query)) {
        if (raw !== undefined) bindQuery(json, key, raw);
      }
    }
    for (const variable of variables) {
      setAt(
        json,
        variable.fields,
        textToJson(variable.fields[variable.fields.length - 1], params[variable.param]),
      );
    }
    return json;
  };
}

/** Fields along a dotted path (proto or JSON names); intermediate fields must be plain messages. */
function resolveFieldPath(input: DescMessage, path: readonly string[]): DescField[] | undefined {
  const fields: DescField[] = [];
  let message: DescMessage | undefined = input;
  for (const name of path) {
    const field: DescField | undefined = message?.fields.find(
      (f) => f.name === name || f.jsonName === name,
    );
    if (field === undefined) return undefined;
    fields.push(field);
    message =
      field.fieldKind === "message" && !field.message.typeName.startsWith("google.protobuf.")
        ? field.message
        : undefined;
  }
  return fields;
}

/** Well-known types whose JSON form is one string or number, so a URL can carry them. */
const textualWellKnownTypes = new Set(
  [
    "Timestamp",
    "Duration",
    "FieldMask",
    "DoubleValue",
    "FloatValue",
    "Int64Value",
    "UInt64Value",
    "Int32Value",
    "UInt32Value",
    "BoolValue",
    "StringValue",
    "BytesValue",
  ].map((name) => `google.protobuf.${name}`),
);

/**
 * Whether a query parameter can set the field: scalars, enums, lists of them and textual
 * well-known types. The OpenAPI generator documents exactly these as query parameters.
 */
export function settableFromQuery(field: DescField): boolean {
  return acceptsText(field, field.fieldKind === "list");
}

function acceptsText(field: DescField, repeated: boolean): boolean {
  switch (field.fieldKind) {
    case "scalar":
    case "enum":
      return !repeated;
    case "message":
      return !repeated && textualWellKnownTypes.has(field.message.typeName);
    case "list":
      return repeated && (field.listKind === "scalar" || field.listKind === "enum");
    case "map":
      return false;
  }
}

/**
 * URL text to the field's JSON form. Numbers, bytes and timestamps are already valid proto3 JSON
 * as strings; booleans and enum numbers are not, so they are converted here. Anything else stays
 * text and the strict parse rejects it, naming the field.
 */
function textToJson(field: DescField, text: string): JsonValue {
  const enumLike =
    field.fieldKind === "enum" || (field.fieldKind === "list" && field.listKind === "enum");
  if (enumLike) return /^-?\d+$/.test(text) ? Number(text) : text;
  const isBool =
    ((field.fieldKind === "scalar" ||
      (field.fieldKind === "list" && field.listKind === "scalar")) &&
      field.scalar === ScalarType.BOOL) ||
    (field.fieldKind === "message" && field.message.typeName === "google.protobuf.BoolValue");
  if (isBool && (text === "true" || text === "false")) return text === "true";
  return text;
}

/** Sets a value at a field path, copying the objects on the way so the parsed body is not mutated. */
function setAt(json: JsonObject, fields: readonly DescField[], value: JsonValue) {
  let target = json;
  for (const [index, field] of fields.entries()) {
    if (field.jsonName !== field.name && field.jsonName in target && !(field.name in target)) {
      target[field.name] = target[field.jsonName];
      delete target[field.jsonName];
    }
    if (index === fields.length - 1) {
      target[field.name] = value;
      return;
    }
    const existing = target[field.name];
    const next: JsonObject =
      typeof existing === "object" && existing !== null && !Array.isArray(existing)
        ? { ...existing }
        : {};
    target[field.name] = next;
    target = next;
  }
}

function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
}

function requireBodyObject(body: unknown): JsonObject {
  if (body === undefined) return {};
  requireJsonBody(body);
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidArgument("request body must be a JSON object");
  }
  return body as JsonObject;
}

/** Fastify hands non-JSON content types over as strings or buffers. */
function requireJsonBody(body: unknown) {
  if (typeof body === "string" || Buffer.isBuffer(body)) {
    throw new AtriumError(Code.InvalidArgument, "request body must be application/json", {
      httpStatus: 415,
    });
  }
}
