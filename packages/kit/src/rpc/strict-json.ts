import {
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  ScalarType,
} from "@bufbuild/protobuf";
import { invalidArgument } from "../errors.js";

/**
 * What proto3 JSON parsing lets through but a caller cannot have meant: number strings that are
 * not decimal (protobuf-es reads them with `Number()`, so `"0x10"` became 16 and `"1e1"` 10) and
 * timestamps of days that do not exist (`Date.parse` rolls `2026-02-30` over into March).
 * Applied to the request JSON of REST and of Connect JSON before the proto3 parse.
 */
export function checkJsonValues(schema: DescMessage, json: JsonObject, prefix = ""): void {
  const problem = messageProblem(schema, json, prefix);
  if (problem) throw invalidArgument(problem);
}

const decimalInteger = /^-?\d+$/;
const decimalNumber = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const specialFloats = new Set(["NaN", "Infinity", "-Infinity"]);
const rfc3339 =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/;

const integerScalars = new Set([
  ScalarType.INT32,
  ScalarType.SINT32,
  ScalarType.SFIXED32,
  ScalarType.UINT32,
  ScalarType.FIXED32,
  ScalarType.INT64,
  ScalarType.SINT64,
  ScalarType.SFIXED64,
  ScalarType.UINT64,
  ScalarType.FIXED64,
]);

/** Wrapper types whose JSON form is their one scalar. */
const wrapperScalars: Record<string, ScalarType> = {
  "google.protobuf.Int32Value": ScalarType.INT32,
  "google.protobuf.UInt32Value": ScalarType.UINT32,
  "google.protobuf.Int64Value": ScalarType.INT64,
  "google.protobuf.UInt64Value": ScalarType.UINT64,
  "google.protobuf.DoubleValue": ScalarType.DOUBLE,
  "google.protobuf.FloatValue": ScalarType.FLOAT,
};

function scalarProblem(scalar: ScalarType, value: JsonValue): string | undefined {
  if (typeof value !== "string") return undefined;
  if (integerScalars.has(scalar)) {
    return decimalInteger.test(value) ? undefined : `"${value}" is not a decimal integer`;
  }
  if (scalar === ScalarType.DOUBLE || scalar === ScalarType.FLOAT) {
    return decimalNumber.test(value) || specialFloats.has(value)
      ? undefined
      : `"${value}" is not a decimal number`;
  }
  return undefined;
}

const monthDays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const daysIn = (year: number, month: number) =>
  month === 2 && isLeapYear(year) ? 29 : monthDays[month - 1];

const minTimestampMs = Date.parse("0001-01-01T00:00:00Z");
const maxTimestampMs = Date.parse("9999-12-31T23:59:59.999Z");

function timestampProblem(value: JsonValue): string | undefined {
  if (typeof value !== "string") return undefined;
  const match = rfc3339.exec(value);
  if (!match) return `"${value}" is not an RFC 3339 time (like 2026-01-31T12:00:00Z)`;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const [offsetHours, offsetMinutes] = [match[7], match[8]].map((part) => Number(part ?? 0));
  const real =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysIn(year, month) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 23 &&
    offsetMinutes <= 59;
  if (!real) return `"${value}" is not a real date and time`;
  const ms = Date.parse(value);
  if (!(ms >= minTimestampMs && ms <= maxTimestampMs)) {
    return `"${value}" is not from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z`;
  }
  return undefined;
}

function messageProblem(schema: DescMessage, json: JsonObject, prefix: string) {
  for (const field of schema.fields) {
    const key = Object.hasOwn(json, field.jsonName) ? field.jsonName : field.name;
    if (!Object.hasOwn(json, key)) continue;
    const value = json[key];
    if (value === null) continue;
    const path = prefix === "" ? key : `${prefix}.${key}`;
    const problem = fieldProblem(field, value, path);
    if (problem) return problem;
  }
  return undefined;
}

function fieldProblem(field: DescField, value: JsonValue, path: string): string | undefined {
  switch (field.fieldKind) {
    case "scalar":
      return located(path, scalarProblem(field.scalar, value));
    case "message":
      return valueProblem(field.message, value, path);
    case "list":
      if (!Array.isArray(value)) return undefined;
      for (const [index, item] of value.entries()) {
        const problem =
          field.listKind === "scalar"
            ? located(`${path}[${index}]`, scalarProblem(field.scalar, item))
            : field.listKind === "message"
              ? valueProblem(field.message, item, `${path}[${index}]`)
              : undefined;
        if (problem) return problem;
      }
      return undefined;
    case "map":
      if (!isJsonObject(value)) return undefined;
      for (const [key, item] of Object.entries(value)) {
        const problem =
          field.mapKind === "scalar"
            ? located(`${path}.${key}`, scalarProblem(field.scalar, item))
            : field.mapKind === "message"
              ? valueProblem(field.message, item, `${path}.${key}`)
              : undefined;
        if (problem) return problem;
      }
      return undefined;
    default:
      return undefined;
  }
}

function valueProblem(message: DescMessage, value: JsonValue, path: string): string | undefined {
  if (message.typeName === "google.protobuf.Timestamp") {
    return located(path, timestampProblem(value));
  }
  const wrapped = wrapperScalars[message.typeName];
  if (wrapped !== undefined) return located(path, scalarProblem(wrapped, value));
  // Other well-known types have JSON forms of their own; the proto3 parse checks them.
  if (message.typeName.startsWith("google.protobuf.") || !isJsonObject(value)) return undefined;
  return messageProblem(message, value, path);
}

const located = (path: string, problem: string | undefined) =>
  problem && `invalid value for field "${path}": ${problem}`;

function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
