import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createLogger } from "@atrium/kit";
import { chatDescriptionPath, chatOpenApiDocument } from "./chat-description.js";
import { startAgentService } from "./start-chat-service.js";

const committedPath = new URL("../../../../openapi/chat.openapi.json", import.meta.url);

test("the committed openapi/chat.openapi.json is what the router's schemas describe (make gen)", async () => {
  const committed = JSON.parse(await readFile(committedPath, "utf8"));
  assert.deepEqual(await chatOpenApiDocument(), committed);
  assert.deepEqual(Object.keys(committed.paths).sort(), [
    "/api/v1/chat",
    "/api/v1/chat/history/{workflow_id}/{step_id}",
    "/api/v1/chat/runs",
    "/api/v1/chat/runs/{workflow_id}/{step_id}",
    "/api/v1/chat/runs/{workflow_id}/{step_id}/cancel",
    "/api/v1/chat/runs/{workflow_id}/{step_id}/resume",
    "/api/v1/chat/stream/{workflow_id}",
    "/api/v1/chat/workflows",
  ]);
  const chat = committed.paths["/api/v1/chat"].post;
  assert.deepEqual(chat.tags, ["chat"], "the router's tags");
  assert.deepEqual(
    chat.requestBody.content["application/json"].schema.required,
    ["message"],
    "ChatRequest",
  );
  assert.deepEqual(Object.keys(chat.responses), ["200", "400", "401", "409", "413", "500"]);
});

test("the agent host serves the same document at /openapi.json, behind its authentication", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "agent-description-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const service = await startAgentService({
    env: {
      AGENT_PORT: "0",
      AGENT_HOST: "127.0.0.1",
      TRACES_DIR: dir,
      ATRIUM_AGENT_API_KEY: "description-test-key",
    },
    logger: createLogger({ name: "agent", level: "silent" }),
  });
  t.after(() => service.stop());
  const url = `${service.urls.rest}${chatDescriptionPath}`;
  assert.equal((await fetch(url)).status, 401);
  const answer = await fetch(url, { headers: { "x-api-key": "description-test-key" } });
  assert.equal(answer.status, 200);
  assert.deepEqual(await answer.json(), JSON.parse(await readFile(committedPath, "utf8")));
});
