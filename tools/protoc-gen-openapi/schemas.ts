import { type DescEnum, type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { descriptionOf } from "./comments.js";

/** An OpenAPI 3.0 schema object (or any other OpenAPI object: all are plain JSON). */
export type OpenApiObject = { [key: string]: unknown };

export const componentRef = (name: string): OpenApiObject => ({
  $ref: `#/components/schemas/${name}`,
});

/** proto3 JSON forms of scalars: 64-bit integers are strings, bytes are base64. */
export function scalarSchema(scalar: ScalarType): OpenApiObject {
  switch (scalar) {
    case ScalarType.DOUBLE:
      return { type: "number", format: "double" };
    case ScalarType.FLOAT:
      return { type: "number", format: "float" };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", format: "int32" };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", format: "int64", minimum: 0, maximum: 4294967295 };
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return { type: "string", format: "int64" };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return { type: "string", format: "uint64" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BYTES:
      return { type: "string", format: "byte" };
  }
}

const wrappedScalars: Record<string, ScalarType> = {
  DoubleValue: ScalarType.DOUBLE,
  FloatValue: ScalarType.FLOAT,
  Int64Value: ScalarType.INT64,
  UInt64Value: ScalarType.UINT64,
  Int32Value: ScalarType.INT32,
  UInt32Value: ScalarType.UINT32,
  BoolValue: ScalarType.BOOL,
  StringValue: ScalarType.STRING,
  BytesValue: ScalarType.BYTES,
};

/** Well-known types have their own JSON forms and are written inline, not as components. */
function wellKnownSchema(typeName: string): OpenApiObject | undefined {
  if (!typeName.startsWith("google.protobuf.")) return undefined;
  const name = typeName.slice("google.protobuf.".length);
  if (name in wrappedScalars) return { ...scalarSchema(wrappedScalars[name]), nullable: true };
  switch (name) {
    case "Timestamp":
      return { type: "string", format: "date-time" };
    case "Duration":
      return { type: "string", pattern: "^-?[0-9]+(\\.[0-9]{1,9})?s$", example: "1.5s" };
    case "FieldMask":
      return { type: "string", description: "Comma-separated field paths." };
    case "Struct":
      return { type: "object", additionalProperties: true };
    case "Value":
      return {};
    case "ListValue":
      return { type: "array", items: {} };
    case "Empty":
      return { type: "object" };
    case "Any":
      return {
        type: "object",
        required: ["@type"],
        properties: { "@type": { type: "string" } },
        additionalProperties: true,
      };
    default:
      return undefined;
  }
}

export interface SchemaCatalogOptions {
  /**
   * Messages that only ever appear in responses. The REST transport writes their implicit-presence
   * fields even when empty, so those fields are listed as required.
   */
  responseOnly: (message: DescMessage) => boolean;
}

/** Builds the schemas of a document, collecting every message and enum it refers to. */
export interface SchemaCatalog {
  /** Schema of a message value: a component reference, or a well-known type's inline form. */
  messageSchema(message: DescMessage): OpenApiObject;
  /** Schema of a field's value as proto3 JSON. */
  valueSchema(field: DescField): OpenApiObject;
  /** `valueSchema` with the field's comment as description and its deprecation. */
  fieldSchema(field: DescField): OpenApiObject;
  /** Object schema of some of a message's fields (a request body that omits path fields). */
  objectSchema(message: DescMessage, fields: readonly DescField[]): OpenApiObject;
  /** The collected components, sorted by name. */
  components(): Record<string, OpenApiObject>;
}

export function createSchemaCatalog(options: SchemaCatalogOptions): SchemaCatalog {
  const components = new Map<string, OpenApiObject>();

  const enumSchema = (desc: DescEnum): OpenApiObject => {
    if (!components.has(desc.typeName)) {
      components.set(desc.typeName, {
        type: "string",
        ...optional("description", descriptionOf(desc)),
        enum: desc.values.map((value) => value.name),
      });
    }
    return componentRef(desc.typeName);
  };

  const messageSchema = (desc: DescMessage): OpenApiObject => {
    const wellKnown = wellKnownSchema(desc.typeName);
    if (wellKnown !== undefined) return wellKnown;
    if (!components.has(desc.typeName)) {
      // Reserve the name first: messages may refer to themselves.
      components.set(desc.typeName, {});
      components.set(desc.typeName, objectSchema(desc, desc.fields));
    }
    return componentRef(desc.typeName);
  };

  const valueSchema = (field: DescField): OpenApiObject => {
    switch (field.fieldKind) {
      case "scalar":
        return scalarSchema(field.scalar);
      case "enum":
        return enumSchema(field.enum);
      case "message":
        return messageSchema(field.message);
      case "list":
        return {
          type: "array",
          items:
            field.listKind === "scalar"
              ? scalarSchema(field.scalar)
              : field.listKind === "enum"
                ? enumSchema(field.enum)
                : messageSchema(field.message),
        };
      case "map":
        return {
          type: "object",
          additionalProperties:
            field.mapKind === "scalar"
              ? scalarSchema(field.scalar)
              : field.mapKind === "enum"
                ? enumSchema(field.enum)
                : messageSchema(field.message),
        };
    }
  };

  const fieldSchema = (field: DescField): OpenApiObject => {
    const schema = valueSchema(field);
    const annotations = {
      ...optional("description", descriptionOf(field)),
      ...(field.deprecated ? { deprecated: true } : {}),
    };
    if (Object.keys(annotations).length === 0) return schema;
    // Siblings of $ref are ignored in OpenAPI 3.0, so a described reference is wrapped.
    return "$ref" in schema ? { allOf: [schema], ...annotations } : { ...schema, ...annotations };
  };

  const objectSchema = (desc: DescMessage, fields: readonly DescField[]): OpenApiObject => {
    const required = options.responseOnly(desc)
      ? fields.filter((f) => f.presence === FeatureSet_FieldPresence.IMPLICIT).map((f) => f.name)
      : [];
    const oneofNotes = desc.oneofs.map(
      (oneof) => `At most one of ${oneof.fields.map((f) => `\`${f.name}\``).join(", ")} is set.`,
    );
    const description = [descriptionOf(desc), ...oneofNotes].filter(Boolean).join("\n\n");
    return {
      type: "object",
      ...optional("description", description || undefined),
      ...(required.length > 0 ? { required } : {}),
      properties: Object.fromEntries(fields.map((f) => [f.name, fieldSchema(f)])),
    };
  };

  return {
    messageSchema,
    valueSchema,
    fieldSchema,
    objectSchema,
    components: () =>
      Object.fromEntries([...components].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  };
}

function optional(key: string, value: string | undefined): OpenApiObject {
  return value === undefined ? {} : { [key]: value };
}
