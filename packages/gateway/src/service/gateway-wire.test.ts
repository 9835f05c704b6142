import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { it } from "node:test";
import { gatewayV1, HttpRuleSchema, http } from "@atrium/api";
import {
  type DescField,
  type DescMessage,
  type DescService,
  getOption,
  hasOption,
  ScalarType,
  toJson,
} from "@bufbuild/protobuf";

/*
 * The gateway's contract on the wire, without the names of its messages: per method its gRPC
 * name, kind, idempotency and REST binding, and its request and answer as field number, name,
 * JSON name, label and type, nested messages written out. Binary and JSON encodings depend on
 * exactly these, so two services with equal shapes are interchangeable to every client. The
 * committed shape was taken from gateway.proto when it still declared its own copies of the
 * broker's messages; the gateway now declares the broker's, and a broker change that would alter
 * the gateway's wire (a field added to a shared message) fails here.
 */

const scalarName = (scalar: ScalarType) => ScalarType[scalar].toLowerCase();

/** The type of a singular field, or of a list's items or a map's values. */
function valueType(field: DescField): string {
  if (field.message) return messageShape(field.message);
  if (field.enum) {
    return `enum(${field.enum.values.map((value) => `${value.number}=${value.name}`).join(",")})`;
  }
  return scalarName(field.scalar as ScalarType);
}

function typeOf(field: DescField): string {
  switch (field.fieldKind) {
    case "list":
      return `repeated${field.packed ? " packed" : ""} ${valueType(field)}`;
    case "map":
      return `map<${scalarName(field.mapKey)}, ${valueType(field)}>`;
    default:
      return valueType(field);
  }
}

/** Well-known types have JSON forms of their own: named, not written out. */
function messageShape(message: DescMessage): string {
  if (message.typeName.startsWith("google.protobuf.")) return message.typeName;
  const fields = message.fields.map((field) => {
    const label = field.oneof
      ? `oneof ${field.oneof.name} `
      : field.proto.proto3Optional
        ? "optional "
        : "";
    return `${field.number} ${field.name} ${field.jsonName} ${label}${typeOf(field)}`;
  });
  return `{${fields.join("; ")}}`;
}

function wireShape(service: DescService) {
  return {
    service: service.typeName,
    methods: service.methods.map((method) => ({
      name: method.name,
      kind: method.methodKind,
      idempotency: method.idempotency,
      http: hasOption(method, http) ? toJson(HttpRuleSchema, getOption(method, http)) : null,
      input: messageShape(method.input),
      output: messageShape(method.output),
    })),
  };
}

it("the gateway's wire contract is field for field the one it had with its own message copies", () => {
  const committed = JSON.parse(
    readFileSync(new URL("./gateway-wire.json", import.meta.url), "utf8"),
  ) as unknown;
  assert.deepEqual(wireShape(gatewayV1.GatewayService), committed);
});
