import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { brokerV1, gatewayV1, memoryV1 } from "@atrium/api";
import {
  create,
  createFileRegistry,
  type DescField,
  type DescFile,
  type DescMessage,
  ScalarType,
  toJson,
} from "@bufbuild/protobuf";
import {
  FileDescriptorProtoSchema,
  file_google_protobuf_struct,
  file_google_protobuf_timestamp,
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
} from "@bufbuild/protobuf/wkt";
import { createMessageJsonWriter } from "./json-writer.js";
import { libraryService } from "./testdata/library-service.js";

const writeOptions = { alwaysEmitImplicit: true, useProtoFieldName: true } as const;

/** Every field kind the API could use, in one proto3 file (a recursive type included). */
const kitchenSink = (() => {
  const scalars: [string, Type][] = [
    ["f_double", Type.DOUBLE],
    ["f_float", Type.FLOAT],
    ["f_int64", Type.INT64],
    ["f_uint64", Type.UINT64],
    ["f_int32", Type.INT32],
    ["f_fixed64", Type.FIXED64],
    ["f_fixed32", Type.FIXED32],
    ["f_bool", Type.BOOL],
    ["f_string", Type.STRING],
    ["f_bytes", Type.BYTES],
    ["f_uint32", Type.UINT32],
    ["f_sfixed32", Type.SFIXED32],
    ["f_sfixed64", Type.SFIXED64],
    ["f_sint32", Type.SINT32],
    ["f_sint64", Type.SINT64],
  ];
  const one = Label.OPTIONAL;
  const many = Label.REPEATED;
  let number = 0;
  const f = (name: string, type: Type, label: Label, extra: Record<string, unknown> = {}) => ({
    name,
    number: ++number,
    type,
    label,
    ...extra,
  });
  const entry = (name: string, key: Type, value: Type, typeName?: string) => ({
    name,
    field: [
      { name: "key", number: 1, type: key, label: one },
      { name: "value", number: 2, type: value, label: one, typeName },
    ],
    options: { mapEntry: true },
  });
  const proto = create(FileDescriptorProtoSchema, {
    name: "fixture/v1/sink.proto",
    package: "fixture.v1",
    syntax: "proto3",
    dependency: ["google/protobuf/timestamp.proto"],
    enumType: [
      {
        name: "Color",
        value: [
          { name: "COLOR_UNSPECIFIED", number: 0 },
          { name: "COLOR_RED", number: 1 },
        ],
      },
    ],
    messageType: [
      {
        name: "Sink",
        field: [
          ...scalars.map(([name, type]) => f(name, type, one)),
          ...scalars.map(([name, type]) => f(`r_${name}`, type, many)),
          ...scalars.map(([name, type], i) =>
            f(`o_${name}`, type, one, { proto3Optional: true, oneofIndex: i + 1 }),
          ),
          f("color", Type.ENUM, one, { typeName: ".fixture.v1.Color" }),
          f("colors", Type.ENUM, many, { typeName: ".fixture.v1.Color" }),
          f("child", Type.MESSAGE, one, { typeName: ".fixture.v1.Sink" }),
          f("children", Type.MESSAGE, many, { typeName: ".fixture.v1.Sink" }),
          f("at", Type.MESSAGE, one, { typeName: ".google.protobuf.Timestamp" }),
          f("ats", Type.MESSAGE, many, { typeName: ".google.protobuf.Timestamp" }),
          f("choice_text", Type.STRING, one, { oneofIndex: 0 }),
          f("choice_color", Type.ENUM, one, { oneofIndex: 0, typeName: ".fixture.v1.Color" }),
          f("choice_child", Type.MESSAGE, one, { oneofIndex: 0, typeName: ".fixture.v1.Sink" }),
          f("choice_at", Type.MESSAGE, one, {
            oneofIndex: 0,
            typeName: ".google.protobuf.Timestamp",
          }),
          f("labels", Type.MESSAGE, many, { typeName: ".fixture.v1.Sink.LabelsEntry" }),
          f("counts", Type.MESSAGE, many, { typeName: ".fixture.v1.Sink.CountsEntry" }),
          f("flags", Type.MESSAGE, many, { typeName: ".fixture.v1.Sink.FlagsEntry" }),
          f("shades", Type.MESSAGE, many, { typeName: ".fixture.v1.Sink.ShadesEntry" }),
          f("blobs", Type.MESSAGE, many, { typeName: ".fixture.v1.Sink.BlobsEntry" }),
        ],
        oneofDecl: [{ name: "choice" }, ...scalars.map(([name]) => ({ name: `_o_${name}` }))],
        nestedType: [
          entry("LabelsEntry", Type.STRING, Type.STRING),
          entry("CountsEntry", Type.INT32, Type.INT64),
          entry("FlagsEntry", Type.BOOL, Type.MESSAGE, ".fixture.v1.Sink"),
          entry("ShadesEntry", Type.STRING, Type.ENUM, ".fixture.v1.Color"),
          entry("BlobsEntry", Type.UINT64, Type.BYTES),
        ],
      },
    ],
  });
  const registry = createFileRegistry(proto, (name) =>
    name === "google/protobuf/timestamp.proto" ? file_google_protobuf_timestamp : undefined,
  );
  return registry.getMessage("fixture.v1.Sink") as DescMessage;
})();

/** A deterministic pseudo-random source, so that a failure can be replayed. */
function random(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T;
  return { next, pick };
}

type Random = ReturnType<typeof random>;

function scalarSample(type: ScalarType, r: Random): unknown {
  switch (type) {
    case ScalarType.STRING:
      return r.pick(["", "plain", 'quote " and \\ slash', "ünïcödé ✓", "line\nbreak"]);
    case ScalarType.BOOL:
      return r.next() < 0.5;
    case ScalarType.BYTES:
      return r.pick([
        new Uint8Array(0),
        new Uint8Array([0, 255, 7]),
        new TextEncoder().encode("hello"),
      ]);
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return r.pick([
        0,
        -1.5,
        3.25,
        1e21,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
      ]);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return r.pick([0n, -9007199254740993n, 42n]);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return r.pick([0n, 18446744073709551615n, 42n]);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return r.pick([0, 1, 4294967295]);
    default:
      return r.pick([0, -2147483648, 7]);
  }
}

function mapKeySample(type: ScalarType, r: Random): string {
  if (type === ScalarType.STRING) return r.pick(["", "a", "key with space"]);
  if (type === ScalarType.BOOL) return r.pick(["true", "false"]);
  return r.pick(["0", "-5", "12345"]);
}

function valueSample(
  field: DescField,
  kind: "scalar" | "enum" | "message",
  r: Random,
  depth: number,
): unknown {
  if (kind === "scalar") return scalarSample(field.scalar as ScalarType, r);
  if (kind === "enum") return r.pick([...field.enum!.values.map((v) => v.number), 99]);
  const message = field.message as DescMessage;
  if (message.typeName === "google.protobuf.Timestamp") {
    return {
      seconds: r.pick([0n, 1_700_000_000n, -62135596800n, 253402300799n]),
      nanos: r.pick([0, 1_000_000, 123_456_000, 123_456_789]),
    };
  }
  return sample(message, r, depth + 1);
}

/** An init shape with about half of the fields set, as a handler would return it. */
function sample(schema: DescMessage, r: Random, depth = 0): Record<string, unknown> {
  const init: Record<string, unknown> = {};
  for (const field of schema.fields) {
    if (r.next() < 0.5) continue;
    if (field.fieldKind === "message" && depth > 2) continue;
    // protobuf-es leaves proto3 `optional` fields out of `oneof` (their oneofs are synthetic).
    const oneof = field.oneof;
    if (field.fieldKind === "list") {
      if (field.listKind === "message" && depth > 2) continue;
      const n = Math.floor(r.next() * 3);
      init[field.localName] = Array.from({ length: n }, () =>
        valueSample(field, field.listKind, r, depth),
      );
    } else if (field.fieldKind === "map") {
      if (field.mapKind === "message" && depth > 2) continue;
      const map: Record<string, unknown> = {};
      for (let i = Math.floor(r.next() * 3); i > 0; i--) {
        map[mapKeySample(field.mapKey, r)] = valueSample(field, field.mapKind, r, depth);
      }
      init[field.localName] = map;
    } else if (oneof) {
      init[oneof.localName] = {
        case: field.localName,
        value: valueSample(field, field.fieldKind, r, depth),
      };
    } else {
      init[field.localName] = valueSample(field, field.fieldKind, r, depth);
    }
  }
  return init;
}

function messagesOf(file: DescFile): DescMessage[] {
  const all: DescMessage[] = [];
  const visit = (m: DescMessage) => {
    all.push(m);
    m.nestedMessages.forEach(visit);
  };
  file.messages.forEach(visit);
  return all;
}

const apiMessages = [
  memoryV1.file_memory_v1_memory,
  brokerV1.file_broker_v1_broker,
  gatewayV1.file_gateway_v1_gateway,
].flatMap(messagesOf);
const libraryMessages = libraryService.methods.flatMap((m) => [m.input, m.output]);

describe("message JSON writer", () => {
  it("writes what create + toJson write, for every message type of the API", () => {
    let compared = 0;
    for (const schema of [...apiMessages, ...libraryMessages, kitchenSink]) {
      const write = createMessageJsonWriter(schema);
      if (!write) continue;
      for (let seed = 1; seed <= 40; seed++) {
        const init = sample(schema, random(seed * 7919 + schema.fields.length));
        const message = create(schema, init);
        const expected = JSON.stringify(toJson(schema, message, writeOptions));
        assert.equal(
          JSON.stringify(write(init)),
          expected,
          `${schema.typeName} from an init shape, seed ${seed}`,
        );
        assert.equal(
          JSON.stringify(write(message)),
          expected,
          `${schema.typeName} from a message, seed ${seed}`,
        );
        compared++;
      }
    }
    assert.ok(compared > 40 * apiMessages.length * 0.8, `compared ${compared} samples`);
  });

  it("writes every implicit field of an empty message with its default", () => {
    const write = createMessageJsonWriter(kitchenSink)!;
    const expected = JSON.stringify(toJson(kitchenSink, create(kitchenSink), writeOptions));
    assert.equal(JSON.stringify(write({})), expected);
    assert.match(expected, /"f_int64":"0"/);
  });

  it("leaves types with special JSON forms to protobuf-es", () => {
    const struct = file_google_protobuf_struct.messages[0] as DescMessage;
    assert.equal(createMessageJsonWriter(struct), undefined);
    const usesStruct = apiMessages.filter((m) =>
      m.fields.some((f) => f.message?.typeName === "google.protobuf.Struct"),
    );
    assert.ok(usesStruct.length > 0, "the API has a message with a Struct field");
    for (const schema of usesStruct) assert.equal(createMessageJsonWriter(schema), undefined);
  });

  it("rejects a value of the wrong type, naming the field", () => {
    const write = createMessageJsonWriter(kitchenSink)!;
    assert.throws(() => write({ fString: 5 }), /fixture\.v1\.Sink\.f_string.*expected a string/);
    assert.throws(() => write({ at: { seconds: 253402300800n } }), /9999-12-31/);
  });
});
