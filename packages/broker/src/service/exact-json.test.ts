import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseJsonKeepingParamNumbers } from "./exact-json.js";

describe("parseJsonKeepingParamNumbers", () => {
  it("keeps params numbers as exact text and everything else as JSON.parse does", () => {
    const text =
      '{"name":"a\\"b","n":1.50,"params":{"ratio":1.50,"big":12345678901234567890,"s":"x"},"l":[1,true,null]}';
    assert.deepEqual(parseJsonKeepingParamNumbers(text), {
      name: 'a"b',
      n: 1.5,
      params: { ratio: "1.50", big: "12345678901234567890", s: "x" },
      l: [1, true, null],
    });
  });

  it("rejects malformed JSON", () => {
    for (const bad of ["{", '{"a":}', "[1,]", '{"a":1} x', "01"]) {
      assert.throws(() => parseJsonKeepingParamNumbers(bad), SyntaxError, bad);
    }
  });
});

describe("parseJsonKeepingParamNumbers on hostile input", () => {
  it("refuses nesting beyond the transports' limit, naming where, without exhausting the stack", () => {
    const deep = `{"params":${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}}`;
    assert.throws(
      () => parseJsonKeepingParamNumbers(deep),
      /^.*params\.a\.a.* is nested more than 64 levels$/,
    );
    const fine = `{"params":${'{"a":'.repeat(60)}1${"}".repeat(60)}}`;
    assert.ok(parseJsonKeepingParamNumbers(fine));
  });

  it("keeps a __proto__ key as a key, as JSON.parse does, for the input rule to refuse", () => {
    const parsed = parseJsonKeepingParamNumbers('{"params":{"__proto__":{"x":1}}}') as {
      params: Record<string, unknown>;
    };
    assert.deepEqual(Object.keys(parsed.params), ["__proto__"]);
    assert.equal(Object.getPrototypeOf(parsed.params), Object.prototype);
  });
});
