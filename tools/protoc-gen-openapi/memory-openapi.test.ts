import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { http, memoryV1 } from "@atrium/api";
import { getOption } from "@bufbuild/protobuf";

const documentPath = new URL("../../openapi/memory.v1.openapi.json", import.meta.url).pathname;
const document = JSON.parse(readFileSync(documentPath, "utf8"));

describe("the committed memory.v1 OpenAPI document", () => {
  it("is a valid OpenAPI 3.0.3 document stamped with VERSION", async () => {
    await SwaggerParser.validate(documentPath);
    assert.equal(document.openapi, "3.0.3");
    const version = readFileSync(new URL("../../VERSION", import.meta.url), "utf8").trim();
    assert.equal(document.info.version, version);
  });

  it("lists every RPC of the memory proto at its exact path and method", () => {
    const methods = memoryV1.MemoryService.methods;
    assert.equal(methods.length, 13);
    for (const method of methods) {
      const { pattern } = getOption(method, http);
      assert.ok(pattern.case !== undefined && pattern.case !== "custom", method.name);
      const operation = document.paths[pattern.value]?.[pattern.case];
      assert.equal(operation?.operationId, `MemoryService_${method.name}`, method.name);
    }
    const operations = Object.values(document.paths).flatMap((item) => Object.keys(item as object));
    assert.equal(operations.length, methods.length);
  });

  it("follows the proto3 JSON mapping the REST transport speaks", () => {
    const events = document.paths["/api/v1/sessions/{session_id}/events"].post;
    const body = events.requestBody.content["application/json"].schema;
    assert.equal(body.properties.session_id, undefined, "the path carries session_id");
    assert.deepEqual(body.properties.payload.format, "byte");
    assert.equal(body.properties.timestamp.format, "date-time");
    assert.deepEqual(body.properties.metadata.additionalProperties, { type: "string" });

    const context = document.paths["/api/v1/sessions/{session_id}/context"].get;
    assert.deepEqual(
      context.parameters.map((p: { in: string; name: string }) => `${p.in}:${p.name}`),
      ["path:session_id", "query:limit", "query:query", "query:include_segments"],
    );
    assert.deepEqual(document.components.schemas.Error.required, ["code", "message"]);
    const contextResponse = document.components.schemas["memory.v1.GetContextResponse"];
    assert.deepEqual(contextResponse.required, ["stm_events", "relevant_pages", "segments"]);
  });
});
