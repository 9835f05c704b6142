import assert from "node:assert/strict";
import { test } from "node:test";
import { memoryV1 } from "@atrium/api";
import { AtriumError, Code } from "../errors.js";
import { checkJsonValues } from "./strict-json.js";

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

const { GetContextRequestSchema, StoreInteractionRequestSchema, SearchMemoryRequestSchema } =
  memoryV1;

test("number strings must be decimal text", () => {
  for (const limit of ["0x10", "1e1", " 5", "0b1", ""]) {
    assert.match(
      refusal(() => checkJsonValues(GetContextRequestSchema, { limit })),
      /^invalid value for field "limit": ".*" is not a decimal integer$/,
    );
  }
  checkJsonValues(GetContextRequestSchema, { limit: "16" });
  checkJsonValues(GetContextRequestSchema, { limit: 16 });
  assert.match(
    refusal(() => checkJsonValues(SearchMemoryRequestSchema, { similarity_threshold: "0x1" })),
    /"similarity_threshold": "0x1" is not a decimal number/,
  );
  checkJsonValues(SearchMemoryRequestSchema, { similarity_threshold: "0.5e0" });
  checkJsonValues(SearchMemoryRequestSchema, { similarity_threshold: "NaN" });
});

test("timestamps must be real days within 0001..9999", () => {
  for (const timestamp of [
    "2026-02-30T00:00:00Z",
    "2025-02-29T00:00:00Z",
    "2026-04-31T00:00:00Z",
  ]) {
    assert.match(
      refusal(() => checkJsonValues(StoreInteractionRequestSchema, { timestamp })),
      /^invalid value for field "timestamp": ".*" is not a real date and time$/,
    );
  }
  assert.match(
    refusal(() =>
      checkJsonValues(StoreInteractionRequestSchema, { timestamp: "0000-12-31T23:59:59Z" }),
    ),
    /is not from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z/,
  );
  for (const timestamp of ["2024-02-29T00:00:00Z", "2000-02-29T23:59:59.5+01:00"]) {
    checkJsonValues(StoreInteractionRequestSchema, { timestamp });
  }
});
