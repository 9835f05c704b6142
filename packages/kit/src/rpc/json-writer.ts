import {
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  ScalarType,
} from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import { Edition, FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";

/** Writes a message, or the init shape a handler returned for one, as proto3 JSON. */
export type MessageJsonWriter = (message: unknown) => JsonObject;

type ValueWriter = (value: unknown) => JsonValue;
type Fields = Record<string, unknown>;

const TIMESTAMP = "google.protobuf.Timestamp";
const MIN_TIMESTAMP_MS = Date.parse("0001-01-01T00:00:00Z");
const MAX_TIMESTAMP_MS = Date.parse("9999-12-31T23:59:59Z");

/**
 * A writer for the REST transport's JSON (proto field names, implicit defaults written out)
 * built once per message type, giving exactly what `create` followed by protobuf-es `toJson`
 * gives (a test holds the two equal over every message type of the API). Ours because no library
 * does this for protobuf-es descriptors: `toJson` walks reflection objects for every field of
 * every call, which with the `create` before it was a quarter of a GetContext's CPU and most of
 * its garbage. Undefined for the types it does not cover (proto2 and editions files, and the
 * well-known types other than Timestamp, whose JSON forms are special); those keep `toJson`.
 */
export function createMessageJsonWriter(schema: DescMessage): MessageJsonWriter | undefined {
  if (!covered(schema, new Set())) return undefined;
  return compileMessage(schema, new Map());
}

function covered(schema: DescMessage, seen: Set<DescMessage>): boolean {
  if (seen.has(schema)) return true;
  seen.add(schema);
  if (schema.typeName.startsWith("google.protobuf.")) return false;
  if (schema.file.edition !== Edition.EDITION_PROTO3) return false;
  for (const field of schema.fields) {
    if (field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED) return false;
    const message =
      field.fieldKind === "scalar" || field.fieldKind === "enum" ? undefined : field.message;
    if (message === undefined || message.typeName === TIMESTAMP) continue;
    if (!covered(message, seen)) return false;
  }
  return true;
}

function compileMessage(
  schema: DescMessage,
  compiled: Map<DescMessage, MessageJsonWriter>,
): MessageJsonWriter {
  const known = compiled.get(schema);
  if (known) return known;
  // Registered before its fields are compiled, so that recursive types find it.
  let write: MessageJsonWriter = () => {
    throw new Error(`${schema.typeName}: JSON writer used before it was built`);
  };
  const writer: MessageJsonWriter = (message) => write(message);
  compiled.set(schema, writer);
  const steps = [...schema.fields]
    .sort((a, b) => a.number - b.number)
    .map((field) => compileField(field, compiled));
  write = (message) => {
    const fields = message as Fields;
    const json: JsonObject = {};
    for (const step of steps) step(fields, json);
    return json;
  };
  return writer;
}

function compileField(
  field: DescField,
  compiled: Map<DescMessage, MessageJsonWriter>,
): (message: Fields, json: JsonObject) => void {
  const key = field.name;
  const local = field.localName;
  switch (field.fieldKind) {
    case "list": {
      const item = valueWriter(field, field.listKind, compiled);
      return (message, json) => {
        const list = (message[local] ?? []) as unknown[];
        const out: JsonValue[] = new Array(list.length);
        for (let i = 0; i < list.length; i++) out[i] = item(list[i]);
        json[key] = out;
      };
    }
    case "map": {
      const entry = valueWriter(field, field.mapKind, compiled);
      return (message, json) => {
        const map = (message[local] ?? {}) as Fields;
        const out: JsonObject = {};
        for (const name in map) out[name] = entry(map[name]);
        json[key] = out;
      };
    }
    default: {
      const value = valueWriter(field, field.fieldKind, compiled);
      const oneof = field.oneof?.localName;
      if (oneof !== undefined) {
        return (message, json) => {
          const selected = message[oneof] as { case?: string; value?: unknown } | undefined;
          if (selected?.case === local) json[key] = value(selected.value);
        };
      }
      if (field.fieldKind === "message" || field.presence === FeatureSet_FieldPresence.EXPLICIT) {
        return (message, json) => {
          const set = message[local];
          if (set !== undefined && set !== null) json[key] = value(set);
        };
      }
      const zero = value(field.fieldKind === "enum" ? 0 : zeroScalar(field.scalar as ScalarType));
      return (message, json) => {
        const set = message[local];
        json[key] = set === undefined ? zero : value(set);
      };
    }
  }
}

/** The writer of one value of the field: itself, a list item or a map value. */
function valueWriter(
  field: DescField,
  kind: "scalar" | "enum" | "message",
  compiled: Map<DescMessage, MessageJsonWriter>,
): ValueWriter {
  if (kind === "message") return messageValue(field.message as DescMessage, compiled);
  if (kind === "enum") return enumValue(field.enum as DescEnum);
  return scalarValue(field, field.scalar as ScalarType);
}

function messageValue(
  schema: DescMessage,
  compiled: Map<DescMessage, MessageJsonWriter>,
): ValueWriter {
  return schema.typeName === TIMESTAMP ? timestampJson : compileMessage(schema, compiled);
}

function enumValue(schema: DescEnum): ValueWriter {
  const names = new Map(schema.values.map((v) => [v.number, v.name]));
  return (value) => {
    if (typeof value !== "number") throw unexpected(schema.typeName, "an enum number", value);
    return names.get(value) ?? value;
  };
}

function zeroScalar(type: ScalarType): unknown {
  switch (type) {
    case ScalarType.STRING:
      return "";
    case ScalarType.BOOL:
      return false;
    case ScalarType.BYTES:
      return new Uint8Array(0);
    default:
      return 0;
  }
}

function scalarValue(field: DescField, type: ScalarType): ValueWriter {
  const where = `${field.parent.typeName}.${field.name}`;
  switch (type) {
    case ScalarType.STRING:
      return (value) => {
        if (typeof value !== "string") throw unexpected(where, "a string", value);
        return value;
      };
    case ScalarType.BOOL:
      return (value) => {
        if (typeof value !== "boolean") throw unexpected(where, "a boolean", value);
        return value;
      };
    case ScalarType.BYTES:
      return (value) => {
        if (!(value instanceof Uint8Array)) throw unexpected(where, "bytes", value);
        return base64Encode(value);
      };
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return (value) => {
        if (
          typeof value === "bigint" ||
          typeof value === "string" ||
          (typeof value === "number" && Number.isInteger(value))
        ) {
          return value.toString();
        }
        throw unexpected(where, "a 64-bit integer", value);
      };
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return (value) => {
        if (typeof value !== "number") throw unexpected(where, "a number", value);
        if (Number.isNaN(value)) return "NaN";
        if (value === Number.POSITIVE_INFINITY) return "Infinity";
        if (value === Number.NEGATIVE_INFINITY) return "-Infinity";
        return value;
      };
    default:
      return (value) => {
        if (typeof value !== "number") throw unexpected(where, "a number", value);
        return value;
      };
  }
}

/** RFC 3339 with 0, 3, 6 or 9 fractional digits, as protobuf-es writes it. */
function timestampJson(value: unknown): JsonValue {
  const { seconds = 0n, nanos = 0 } = value as { seconds?: bigint | number; nanos?: number };
  const ms = Number(seconds) * 1000;
  if (ms < MIN_TIMESTAMP_MS || ms > MAX_TIMESTAMP_MS) {
    throw new Error(
      `cannot encode ${TIMESTAMP} to JSON: must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z inclusive`,
    );
  }
  if (nanos < 0 || nanos > 999_999_999) {
    throw new Error(`cannot encode ${TIMESTAMP} to JSON: nanos out of range`);
  }
  const iso = new Date(ms).toISOString();
  if (nanos === 0) return iso.replace(".000Z", "Z");
  const digits = String(nanos + 1_000_000_000).slice(1);
  const fraction = digits.endsWith("000000")
    ? digits.slice(0, 3)
    : digits.endsWith("000")
      ? digits.slice(0, 6)
      : digits;
  return `${iso.slice(0, -5)}.${fraction}Z`;
}

function unexpected(where: string, expected: string, value: unknown): Error {
  return new Error(`cannot encode ${where} to JSON: expected ${expected}, got ${typeof value}`);
}
