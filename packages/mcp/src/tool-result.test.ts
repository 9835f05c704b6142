import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AttentionRequiredError,
  ConnectionNotActiveError,
  ConnectionRevokedError,
  GatewayError,
} from "@atrium/sdk";
import { guarded, McpToolError, toolError, toolResult } from "./tool-result.js";

const text = (error: unknown) => (toolError(error).content[0] as { text: string }).text;

test("connection states become sentences a model can pass on", () => {
  assert.match(
    text(new AttentionRequiredError("c1", 409, { error: "attention_required" })),
    /c1 needs attention.*Retrying will not help; ask the user to reconnect/,
  );
  assert.match(
    text(new ConnectionRevokedError("c2", 410, { code: "connection_revoked" })),
    /c2 was revoked/,
  );
  assert.match(
    text(new ConnectionNotActiveError("c3", 400, { code: "connection_not_active" })),
    /c3 is not active/,
  );
  assert.match(
    text(new GatewayError(404, { message: "no such thing" })),
    /^Not found: HTTP 404: no such thing/,
  );
  assert.equal(toolError(new McpToolError("Refused: x")).isError, true);
});

test("unexpected failures are logged and answered without internals", async () => {
  const logged: string[] = [];
  const result = await guarded(
    "probe",
    (_e, where) => logged.push(where),
    async () => {
      throw new Error("ECONNREFUSED 10.0.0.7:5432 password=hunter2");
    },
  );
  assert.equal(result.isError, true);
  assert.doesNotMatch(JSON.stringify(result), /hunter2|10\.0\.0\.7/);
  assert.deepEqual(logged, ["probe"]);
  const refused = await guarded(
    "probe",
    (_e, where) => logged.push(where),
    async () => {
      throw new McpToolError("Refused: header");
    },
  );
  assert.equal((refused.content[0] as { text: string }).text, "Refused: header");
  assert.deepEqual(logged, ["probe"], "refusals are answers, not failures to log");
});

test("results carry structured content and the same as text", () => {
  const result = toolResult({ stored: true });
  assert.deepEqual(result.structuredContent, { stored: true });
  assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), { stored: true });
});
