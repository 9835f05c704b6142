import assert from "node:assert/strict";
import { it } from "node:test";
import { sameParsedValue } from "./parsed-equality.js";

it("compares values as parsed scalars", () => {
  assert.equal(sameParsedValue(true, "TRUE"), true);
  assert.equal(sameParsedValue("true", "True"), true);
  assert.equal(sameParsedValue(1.5, "1.50"), true);
  assert.equal(sameParsedValue("1.50", "1.5"), true);
  assert.equal(sameParsedValue("7", 7), true);
  assert.equal(sameParsedValue("ENC[AES256_GCM,data:x,iv:y,tag:z,type:str]", "secret"), false);
  assert.equal(sameParsedValue("a", "A"), false);
  assert.equal(sameParsedValue({ a: [1, "x"] }, { a: ["1.0", "x"] }), true);
});
