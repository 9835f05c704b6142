import {
  type DescMessage,
  fromJson,
  type JsonObject,
  type JsonValue,
  type MessageShape,
  toJson,
} from "@bufbuild/protobuf";
import { invalidArgument } from "../errors.js";
import { checkJsonValues } from "./strict-json.js";

/** The JSON dialect of the REST transport: proto field names, implicit defaults written out. */
const writeOptions = { alwaysEmitImplicit: true, useProtoFieldName: true } as const;

export function writeMessageJson<Desc extends DescMessage>(
  schema: Desc,
  message: MessageShape<Desc>,
): JsonValue {
  return toJson(schema, message, writeOptions);
}

/**
 * Parses proto3 JSON strictly (unknown fields rejected). A failure becomes InvalidArgument naming
 * the offending field by its path, e.g. `invalid value for field "book.pages": …`, because the
 * parser's own message names the message type, not where the caller went wrong. Values the parse
 * would read loosely (hex number strings, impossible dates) are refused first (strict-json.ts).
 */
export function readMessageJson<Desc extends DescMessage>(
  schema: Desc,
  json: JsonObject,
): MessageShape<Desc> {
  checkJsonValues(schema, json);
  try {
    return fromJson(schema, json);
  } catch (error) {
    throw invalidArgument(locateJsonError(schema, json, "") ?? parserReason(error));
  }
}

function locateJsonError(
  schema: DescMessage,
  json: JsonObject,
  prefix: string,
): string | undefined {
  for (const [key, value] of Object.entries(json)) {
    const path = prefix === "" ? key : `${prefix}.${key}`;
    const field = schema.fields.find((f) => f.name === key || f.jsonName === key);
    if (field === undefined) return `unknown field "${path}"`;
    try {
      fromJson(schema, { [key]: value });
    } catch (error) {
      const nested =
        field.fieldKind === "message" && hasPlainJson(field.message) && isJsonObject(value)
          ? locateJsonError(field.message, value, path)
          : field.fieldKind === "list" && field.listKind === "message" && Array.isArray(value)
            ? locateListError(field.message, value, path)
            : undefined;
      return nested ?? `invalid value for field "${path}": ${parserReason(error)}`;
    }
  }
  return undefined;
}

function locateListError(schema: DescMessage, items: JsonValue[], path: string) {
  if (!hasPlainJson(schema)) return undefined;
  for (const [index, item] of items.entries()) {
    if (!isJsonObject(item)) continue;
    const found = locateJsonError(schema, item, `${path}[${index}]`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Well-known types have their own JSON forms (strings, arbitrary values); they are leaves here. */
function hasPlainJson(schema: DescMessage): boolean {
  return !schema.typeName.startsWith("google.protobuf.");
}

function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The parser says "cannot decode field x.y.Z.f from JSON: expected string, got 5"; keep the reason. */
function parserReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const marker = " from JSON: ";
  const at = message.indexOf(marker);
  return at >= 0 ? message.slice(at + marker.length) : message;
}
