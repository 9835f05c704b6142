import assert from "node:assert/strict";
import { describe, it } from "node:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { libraryService } from "../../packages/kit/src/rpc/testdata/library-service.js";
import { buildOpenApiDocument } from "./document.js";

// biome-ignore lint/suspicious/noExplicitAny: the document is untyped JSON under test.
const document: any = buildOpenApiDocument({
  packageName: "fixture.v1",
  services: [libraryService],
  version: "1.2.3",
});
const schemas = document.components.schemas;
const names = (parameters: { in: string; name: string }[]) =>
  parameters.map((p) => `${p.in}:${p.name}`);

describe("buildOpenApiDocument", () => {
  it("builds a valid document", async () => {
    await SwaggerParser.validate(structuredClone(document));
    assert.equal(document.info.version, "1.2.3");
  });

  it("documents nested path variables and the query parameters a URL can carry", () => {
    const list = document.paths["/v1/shelves/{shelf.id}/books"].get;
    assert.deepEqual(names(list.parameters), [
      "path:shelf.id",
      "query:shelf.theme",
      "query:genres",
      "query:tags",
      "query:page_size",
      "query:include_drafts",
      "query:since",
    ]);
    const genres = list.parameters.find((p: { name: string }) => p.name === "genres");
    assert.deepEqual(genres.schema, {
      type: "array",
      items: { $ref: "#/components/schemas/fixture.v1.Genre" },
    });
  });

  it('documents body: "<field>", additional bindings and response_body', () => {
    const create = document.paths["/v1/shelves/{shelf.id}/books"].post;
    assert.deepEqual(create.requestBody.content["application/json"].schema, {
      $ref: "#/components/schemas/fixture.v1.Book",
    });
    assert.equal(document.paths["/v1/books:create"].post.operationId, "Library_CreateBook_1");
    const get = document.paths["/v1/books/{id}"].get;
    assert.deepEqual(get.responses["200"].content["application/json"].schema, { type: "string" });
  });

  it("maps fields as proto3 JSON: int64 as string, bytes as base64, enums by name", () => {
    assert.deepEqual(schemas["fixture.v1.Book"].properties.pages, {
      type: "string",
      format: "int64",
    });
    assert.deepEqual(schemas["fixture.v1.Book"].properties.cover, {
      type: "string",
      format: "byte",
    });
    assert.deepEqual(schemas["fixture.v1.Genre"], {
      type: "string",
      enum: ["GENRE_UNSPECIFIED", "GENRE_FICTION", "GENRE_SCIENCE"],
    });
    assert.deepEqual(schemas["fixture.v1.ListBooksResponse"].required, ["books"]);
    assert.equal(schemas["fixture.v1.Book"].required, undefined, "Book is also a request body");
  });
});
