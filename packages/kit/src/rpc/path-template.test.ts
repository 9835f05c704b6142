import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fillPathTemplate, parsePathTemplate, toFastifyRoutePath } from "./path-template.js";

describe("parsePathTemplate", () => {
  it("reads literals, variables, nested field paths and a verb", () => {
    assert.deepEqual(parsePathTemplate("/v1/shelves/{shelf.id}/books/{book_id=*}:publish"), {
      segments: [
        { kind: "literal", value: "v1" },
        { kind: "literal", value: "shelves" },
        { kind: "variable", fieldPath: ["shelf", "id"] },
        { kind: "literal", value: "books" },
        { kind: "variable", fieldPath: ["book_id"] },
      ],
      verb: "publish",
    });
  });

  it("rejects what does not map one-to-one onto a route", () => {
    assert.throws(() => parsePathTemplate("v1/x"), /must start with \//);
    assert.throws(() => parsePathTemplate("/v1/{name=shelves/*}"), /spans segments/);
    assert.throws(() => parsePathTemplate("/v1/{name=**}"), /spans segments/);
    assert.throws(() => parsePathTemplate("/v1/*/x"), /binds no field/);
    assert.throws(() => parsePathTemplate("/v1/{a-b}"), /invalid field path/);
    assert.throws(() => parsePathTemplate("/v1//x"), /invalid segment ""/);
  });
});

describe("toFastifyRoutePath", () => {
  it("names route parameters and escapes the verb colon", () => {
    const route = toFastifyRoutePath(
      parsePathTemplate("/v1/shelves/{shelf.id}/books/{id}:publish"),
    );
    assert.equal(route.url, "/v1/shelves/:p0/books/:p1::publish");
    assert.deepEqual(route.variables, [
      { param: "p0", fieldPath: ["shelf", "id"] },
      { param: "p1", fieldPath: ["id"] },
    ]);
  });
});

describe("fillPathTemplate", () => {
  it("puts each field's value in its segment, percent-encoded, and keeps the verb", () => {
    const template = parsePathTemplate("/v1/shelves/{shelf.id}/books/{book_id=*}:publish");
    const values: Record<string, string> = { "shelf.id": "a/b c", book_id: "7" };
    assert.equal(
      fillPathTemplate(template, (fieldPath) => values[fieldPath.join(".")]),
      "/v1/shelves/a%2Fb%20c/books/7:publish",
    );
  });
});
