import type { Attributes, AttributeValue, HrTime, Link, SpanContext } from "@opentelemetry/api";
import type { ReadableSpan, TimedEvent } from "@opentelemetry/sdk-trace-base";

// OTLP's ExportTraceServiceRequest in protobuf, written straight from the SDK's spans into one
// buffer. The SDK's serializer first copies every span into an intermediate object tree and then
// encodes that: about 5 µs of CPU and much garbage per span, which with one span per request
// was most of what tracing cost a cheap call (GetContext). Same message, same fields; the test
// decodes both and compares.

const VARINT = 0;
const FIXED64 = 1;
const LENGTH = 2;
const FIXED32 = 5;

/** A growable byte buffer with protobuf's wire primitives. */
class Writer {
  buffer = Buffer.allocUnsafe(64 * 1024);
  at = 0;

  ensure(bytes: number) {
    if (this.at + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.at + bytes));
    // All of it: a message being written may lie past `at` while its length is placed.
    this.buffer.copy(grown);
    this.buffer = grown;
  }

  varint(value: number) {
    this.ensure(10);
    let v = value;
    while (v > 0x7f) {
      this.buffer[this.at++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buffer[this.at++] = v;
  }

  tag(field: number, wire: number) {
    this.varint(field * 8 + wire);
  }

  /** An int64 as protobuf writes it: negative numbers as ten bytes of two's complement. */
  int64(value: number) {
    if (value >= 0) return this.varint(value);
    const big = BigInt.asUintN(64, BigInt(value));
    this.ensure(10);
    let v = big;
    while (v > 0x7fn) {
      this.buffer[this.at++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buffer[this.at++] = Number(v);
  }

  fixed32(value: number) {
    this.ensure(4);
    this.buffer.writeUInt32LE(value >>> 0, this.at);
    this.at += 4;
  }

  /** Unix nanoseconds of an HrTime as a fixed64, exactly (they pass 2^53). */
  nanos([seconds, nanoseconds]: HrTime) {
    const high = Math.floor(seconds / 0x10000) * 1e9;
    const low = (seconds % 0x10000) * 1e9 + nanoseconds;
    const carry = (high % 0x10000) * 0x10000 + low;
    this.ensure(8);
    this.buffer.writeUInt32LE(carry % 0x100000000, this.at);
    this.buffer.writeUInt32LE(
      Math.floor(high / 0x10000) + Math.floor(carry / 0x100000000),
      this.at + 4,
    );
    this.at += 8;
  }

  double(value: number) {
    this.ensure(8);
    this.buffer.writeDoubleLE(value, this.at);
    this.at += 8;
  }

  string(field: number, value: string) {
    this.tag(field, LENGTH);
    this.ensure(10 + value.length * 3);
    const start = this.at + 1;
    const length = this.buffer.write(value, start, "utf8");
    this.at = start - 1;
    this.placeLength(start, length);
  }

  hex(field: number, value: string) {
    this.tag(field, LENGTH);
    this.varint(value.length / 2);
    this.ensure(value.length / 2);
    this.at += this.buffer.write(value, this.at, "hex");
  }

  /** A nested message: `write` fills it, then its length goes in front. */
  message(field: number, write: () => void) {
    this.tag(field, LENGTH);
    this.ensure(1);
    const start = ++this.at;
    write();
    const length = this.at - start;
    this.at = start - 1;
    this.placeLength(start, length);
  }

  /** Writes `length` at `at`, moving the `length` bytes at `start` (one byte later) after it. */
  private placeLength(start: number, length: number) {
    const width = length < 0x80 ? 1 : length < 0x4000 ? 2 : length < 0x200000 ? 3 : 4;
    if (width > 1) {
      this.ensure(start + length + width - 1 - this.at);
      this.buffer.copy(this.buffer, start + width - 1, start, start + length);
    }
    this.varint(length);
    this.at += length;
  }

  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.at);
  }
}

function anyValue(w: Writer, value: AttributeValue | null | undefined) {
  if (typeof value === "string") w.string(1, value);
  else if (typeof value === "boolean") {
    w.tag(2, VARINT);
    w.varint(value ? 1 : 0);
  } else if (typeof value === "number") {
    if (Number.isInteger(value)) {
      w.tag(3, VARINT);
      w.int64(value);
    } else {
      w.tag(4, FIXED64);
      w.double(value);
    }
  } else if (Array.isArray(value)) {
    w.message(5, () => {
      for (const item of value) w.message(1, () => anyValue(w, item));
    });
  }
}

function attributes(w: Writer, field: number, attrs: Attributes | undefined) {
  if (!attrs) return;
  for (const key in attrs) {
    const value = attrs[key];
    w.message(field, () => {
      w.string(1, key);
      w.message(2, () => anyValue(w, value));
    });
  }
}

function count(w: Writer, field: number, value: number | undefined) {
  if (!value) return;
  w.tag(field, VARINT);
  w.varint(value);
}

function flags(w: Writer, field: number, context: SpanContext, remote: boolean | undefined) {
  w.tag(field, FIXED32);
  w.fixed32((context.traceFlags & 0xff) | 0x100 | (remote ? 0x200 : 0));
}

function event(w: Writer, e: TimedEvent) {
  w.tag(1, FIXED64);
  w.nanos(e.time);
  w.string(2, e.name);
  attributes(w, 3, e.attributes);
  count(w, 4, e.droppedAttributesCount);
}

function link(w: Writer, l: Link) {
  w.hex(1, l.context.traceId);
  w.hex(2, l.context.spanId);
  const state = l.context.traceState?.serialize();
  if (state) w.string(3, state);
  attributes(w, 4, l.attributes);
  count(w, 5, l.droppedAttributesCount);
  flags(w, 6, l.context, l.context.isRemote);
}

function span(w: Writer, s: ReadableSpan) {
  const context = s.spanContext();
  w.hex(1, context.traceId);
  w.hex(2, context.spanId);
  const state = context.traceState?.serialize();
  if (state) w.string(3, state);
  if (s.parentSpanContext?.spanId) w.hex(4, s.parentSpanContext.spanId);
  w.string(5, s.name);
  w.tag(6, VARINT);
  w.varint(s.kind + 1);
  w.tag(7, FIXED64);
  w.nanos(s.startTime);
  w.tag(8, FIXED64);
  w.nanos(s.endTime);
  attributes(w, 9, s.attributes);
  count(w, 10, s.droppedAttributesCount);
  for (const e of s.events) w.message(11, () => event(w, e));
  count(w, 12, s.droppedEventsCount);
  for (const l of s.links) w.message(13, () => link(w, l));
  count(w, 14, s.droppedLinksCount);
  w.message(15, () => {
    if (s.status.message) w.string(2, s.status.message);
    count(w, 3, s.status.code);
  });
  flags(w, 16, context, s.parentSpanContext?.isRemote);
}

/** ExportTraceServiceRequest for `spans`, grouped by resource and instrumentation scope. */
export function encodeSpans(spans: readonly ReadableSpan[]): Uint8Array {
  const byResource = new Map<ReadableSpan["resource"], Map<string, ReadableSpan[]>>();
  for (const s of spans) {
    let scopes = byResource.get(s.resource);
    if (!scopes) {
      scopes = new Map();
      byResource.set(s.resource, scopes);
    }
    const scope = s.instrumentationScope;
    const key = `${scope.name}\n${scope.version ?? ""}\n${scope.schemaUrl ?? ""}`;
    const list = scopes.get(key);
    if (list) list.push(s);
    else scopes.set(key, [s]);
  }
  const w = new Writer();
  for (const [resource, scopes] of byResource) {
    w.message(1, () => {
      w.message(1, () => attributes(w, 1, resource.attributes));
      for (const list of scopes.values()) {
        const scope = list[0].instrumentationScope;
        w.message(2, () => {
          w.message(1, () => {
            w.string(1, scope.name);
            if (scope.version) w.string(2, scope.version);
          });
          for (const s of list) w.message(2, () => span(w, s));
          if (scope.schemaUrl) w.string(3, scope.schemaUrl);
        });
      }
      if (resource.schemaUrl) w.string(3, resource.schemaUrl);
    });
  }
  return w.bytes();
}
