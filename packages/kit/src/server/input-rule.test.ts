import assert from "node:assert/strict";
import { test } from "node:test";
import { AtriumError, Code } from "../errors.js";
import { checkRequestInput, checkRestInput } from "./input-rule.js";

function refusal(run: () => void): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof AtriumError);
    assert.equal(error.code, Code.InvalidArgument);
    return error.rawMessage;
  }
  assert.fail("expected InvalidArgument");
}

test("NUL and lone surrogates are refused naming the field, in values and keys", () => {
  assert.equal(
    refusal(() => checkRequestInput({ user_message: "a\u0000b" })),
    "user_message must not contain a NUL character",
  );
  assert.equal(
    refusal(() => checkRequestInput({ metadata: { k: ["ok", "\ud800"] } })),
    "metadata.k[1] must be valid Unicode (it holds a lone surrogate)",
  );
  assert.equal(
    refusal(() => checkRequestInput({ metadata: { "x\u0000": 1 } })),
    "a key of metadata must not contain a NUL character",
  );
  assert.equal(
    refusal(() => checkRequestInput(new Map([["tags", "\udc00x"]]))),
    "tags must be valid Unicode (it holds a lone surrogate)",
  );
});

test("well-formed text, pairs, bytes and protobuf type names pass", () => {
  checkRequestInput({
    $typeName: "x\u0000",
    text: "emoji \ud83d\ude00 and accents é",
    bytes: new Uint8Array([0, 0, 0]),
    n: 1,
    none: null,
  });
});

test("nesting is bounded", () => {
  let deep: unknown = "leaf";
  for (let i = 0; i < 100; i++) deep = { a: deep };
  assert.match(
    refusal(() => checkRequestInput(deep)),
    /is nested more than 64 levels$/,
  );
  let ok: unknown = "leaf";
  for (let i = 0; i < 60; i++) ok = [ok];
  checkRequestInput(ok);
});

test("REST: path parameters, query values and a PATCH body that is not an object", () => {
  const request = { method: "GET", params: {}, query: {}, body: undefined };
  assert.equal(
    refusal(() => checkRestInput({ ...request, params: { id: "abc\u0000def" } })),
    "id must not contain a NUL character",
  );
  assert.equal(
    refusal(() => checkRestInput({ ...request, query: { workspace_id: "\u0000" } })),
    "workspace_id must not contain a NUL character",
  );
  for (const body of [null, [], "x", 3, undefined]) {
    assert.equal(
      refusal(() => checkRestInput({ ...request, method: "PATCH", body })),
      "a PATCH body must be a JSON object",
    );
  }
  checkRestInput({ ...request, method: "PATCH", body: { name: "x" } });
  checkRestInput({ ...request, method: "POST", body: null });
});

test("a __proto__ key, or constructor holding prototype, is refused naming where it is", () => {
  assert.equal(
    refusal(() => checkRequestInput(JSON.parse('{"params":{"__proto__":{"x":1}}}'))),
    'a key of params is "__proto__", which is not accepted as a key',
  );
  assert.equal(
    refusal(() => checkRequestInput(JSON.parse('{"constructor":{"prototype":{"x":1}}}'))),
    'a key of the request body is "constructor" holding "prototype", which is not accepted',
  );
  checkRequestInput({ constructor: "a builder", prototype: 1 });
});

test("decoded Timestamps and Durations outside their types' ranges are refused", () => {
  const timestamp = (seconds: bigint, nanos = 0) => ({
    created: { $typeName: "google.protobuf.Timestamp", seconds, nanos },
  });
  assert.match(
    refusal(() => checkRequestInput(timestamp(2n ** 62n))),
    /^created must be a time/,
  );
  assert.match(
    refusal(() => checkRequestInput(timestamp(-62_135_596_801n))),
    /^created must be/,
  );
  assert.match(
    refusal(() => checkRequestInput(timestamp(0n, -1))),
    /^created must have nanos/,
  );
  assert.match(
    refusal(() => checkRequestInput(timestamp(0n, 1e9))),
    /^created must have nanos/,
  );
  checkRequestInput(timestamp(253_402_300_799n, 999_999_999));
  checkRequestInput(timestamp(-62_135_596_800n));
  const duration = { $typeName: "google.protobuf.Duration", seconds: 5n, nanos: -1 };
  assert.match(
    refusal(() => checkRequestInput({ ttl: duration })),
    /^ttl must have nanos/,
  );
});
