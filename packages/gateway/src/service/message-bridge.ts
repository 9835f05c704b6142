import { create, type DescField, type DescMessage, type MessageShape } from "@bufbuild/protobuf";

type Copy = (value: unknown) => unknown;

const plans = new WeakMap<DescMessage, WeakMap<DescMessage, Copy>>();

/**
 * The copy of a message into the message of another contract that names its fields the same way
 * (broker ↔ gateway), field by field. The source may have fields the target leaves out (the public
 * contract hides some of the broker's); every field of the target must be a field of the source of
 * the same type. That is checked here, once, so a contract change that breaks the correspondence
 * fails at start-up rather than answering with an empty or wrong value.
 */
export function bridgeOf<From extends DescMessage, To extends DescMessage>(
  from: From,
  to: To,
): (message: MessageShape<From>) => MessageShape<To> {
  return planFor(from, to) as (message: MessageShape<From>) => MessageShape<To>;
}

function planFor(from: DescMessage, to: DescMessage): Copy {
  let byTarget = plans.get(from);
  if (!byTarget) {
    byTarget = new WeakMap();
    plans.set(from, byTarget);
  }
  const known = byTarget.get(to);
  if (known) return known;
  const fields: [string, Copy][] = [];
  const plan: Copy = (message) => {
    const source = message as Record<string, unknown>;
    const init: Record<string, unknown> = {};
    for (const [name, copy] of fields) {
      const value = source[name];
      if (value !== undefined) init[name] = copy(value);
    }
    return create(to, init);
  };
  // Set before the fields are planned: a message may contain itself.
  byTarget.set(to, plan);
  try {
    for (const target of to.fields) {
      const source = from.fields.find((field) => field.name === target.name);
      if (!source)
        throw new Error(`${from.typeName} has no field ${target.name} of ${to.typeName}`);
      fields.push([source.localName, fieldCopy(source, target)]);
    }
  } catch (error) {
    byTarget.delete(to);
    throw error;
  }
  return plan;
}

function fieldCopy(source: DescField, target: DescField): Copy {
  const mismatch = () =>
    new Error(
      `${source.parent.typeName}.${source.name} and ${target.parent.typeName}.${target.name} differ in type`,
    );
  if (source.oneof || target.oneof) throw mismatch();
  const same = (value: unknown) => value;
  switch (source.fieldKind) {
    case "scalar":
      if (target.fieldKind !== "scalar" || target.scalar !== source.scalar) throw mismatch();
      return same;
    case "enum":
      if (target.fieldKind !== "enum" || target.enum.typeName !== source.enum.typeName)
        throw mismatch();
      return same;
    case "message":
      if (target.fieldKind !== "message") throw mismatch();
      return messageCopy(source.message, target.message);
    case "list": {
      if (target.fieldKind !== "list" || target.listKind !== source.listKind) throw mismatch();
      if (source.listKind === "message" && target.listKind === "message") {
        const item = messageCopy(source.message, target.message);
        return (value) => (value as unknown[]).map(item);
      }
      if (source.listKind === "scalar" && target.listKind === "scalar") {
        if (source.scalar !== target.scalar) throw mismatch();
      } else if (source.listKind === "enum" && target.listKind === "enum") {
        if (source.enum.typeName !== target.enum.typeName) throw mismatch();
      }
      return (value) => (value as unknown[]).slice();
    }
    case "map": {
      if (
        target.fieldKind !== "map" ||
        target.mapKey !== source.mapKey ||
        target.mapKind !== source.mapKind
      ) {
        throw mismatch();
      }
      let entry: Copy = same;
      if (source.mapKind === "message" && target.mapKind === "message") {
        entry = messageCopy(source.message, target.message);
      } else if (source.mapKind === "scalar" && target.mapKind === "scalar") {
        if (source.scalar !== target.scalar) throw mismatch();
      } else if (source.mapKind === "enum" && target.mapKind === "enum") {
        if (source.enum.typeName !== target.enum.typeName) throw mismatch();
      }
      return (value) =>
        Object.fromEntries(
          Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, entry(item)]),
        );
    }
  }
}

/** A well-known type (Timestamp) both contracts import is the same message: kept as it is. */
function messageCopy(source: DescMessage, target: DescMessage): Copy {
  if (source.typeName === target.typeName) return (value) => value;
  return planFor(source, target);
}
