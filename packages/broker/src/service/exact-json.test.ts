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
