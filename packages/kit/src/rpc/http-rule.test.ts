import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { memoryV1 } from "@atrium/api";
import { readHttpBindings } from "./http-rule.js";
import { libraryService } from "./testdata/library-service.js";

describe("readHttpBindings", () => {
  it("reads the google.api.http option of a generated method", () => {
    assert.deepEqual(readHttpBindings(memoryV1.MemoryService.method.storeEvent), [
      {
        httpMethod: "POST",
        path: "/api/v1/sessions/{session_id}/events",
        body: "*",
        responseBody: "",
      },
    ]);
  });

  it("includes additional bindings and response_body", () => {
    assert.deepEqual(
      readHttpBindings(libraryService.method.createBook).map(
        (b) => `${b.httpMethod} ${b.path} ${b.body}`,
      ),
      ["POST /v1/shelves/{shelf.id}/books book", "POST /v1/books:create *"],
    );
    assert.equal(readHttpBindings(libraryService.method.getBook)[0].responseBody, "title");
  });
});
