import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AtriumHttpError, createChatClient } from "./index.js";
import { type LoopbackServer, sendJson, startLoopbackServer } from "./testing/loopback-server.js";

const run = {
  workflow_id: "wf_1",
  step_id: "step_1",
  status: "yielded",
  pause: 1,
  pending: [{ kind: "approval", detail: "sending needs approval" }],
  host: "host_1",
  cancel_requested: false,
  created_at: new Date(0).toISOString(),
  updated_at: new Date(0).toISOString(),
};

describe("chat client: runs", () => {
  let host: LoopbackServer;
  before(async () => {
    host = await startLoopbackServer((request, response) => {
      const body = request.body.length > 0 ? JSON.parse(request.body.toString()) : undefined;
      if (request.url === "/api/v1/chat/runs") {
        return sendJson(response, 202, {
          workflow_id: body.workflow_id,
          step_id: "step_2",
          status: "running",
        });
      }
      if (request.url === "/api/v1/chat/runs/wf_1/step_1" && request.method === "GET") {
        return sendJson(response, 200, run);
      }
      if (request.url === "/api/v1/chat/runs/wf_1/step_1/resume") {
        if (body.pause === 0) {
          return sendJson(response, 409, {
            error: "pause 0 of step step_1 is stale",
            status: "yielded",
          });
        }
        if (body.background) {
          return sendJson(response, 202, {
            workflow_id: "wf_1",
            step_id: "step_1",
            status: "running",
          });
        }
        return sendJson(response, 200, {
          workflow_id: "wf_1",
          step_id: "step_1",
          status: "success",
          answer: "Sent",
          sources: [],
          tokens: {},
          elapsed_ms: 3,
        });
      }
      if (request.url === "/api/v1/chat/runs/wf_1/step_1/cancel") {
        return sendJson(response, 200, {
          ...run,
          status: "cancelled",
          reason: "cancelled by request",
        });
      }
      return sendJson(response, 404, { error: "not found" });
    });
  });
  after(() => host.close());

  it("starts in the background, reads, resumes and cancels a run on the documented routes", async () => {
    const chat = createChatClient({ baseUrl: `${host.url}/api/v1` });
    assert.deepEqual(await chat.start({ message: "hi", workflow_id: "wf_1", on_busy: "enqueue" }), {
      workflow_id: "wf_1",
      step_id: "step_2",
      status: "running",
    });
    assert.equal((await chat.run("wf_1", "step_1")).pause, 1);
    const resumed = await chat.resume("wf_1", "step_1", { approval: "approve", pause: 1 });
    assert.equal(resumed.answer, "Sent");
    const background = await chat.resumeInBackground("wf_1", "step_1", { approval: "approve" });
    assert.equal(background.status, "running");
    assert.equal((await chat.cancel("wf_1", "step_1")).status, "cancelled");
    const stale = await chat.resume("wf_1", "step_1", { pause: 0 }).catch((error) => error);
    assert.ok(stale instanceof AtriumHttpError);
    assert.equal(stale.status, 409);
    assert.deepEqual(
      host.requests.map((r) => [r.method, r.url, r.body.toString()]),
      [
        ["POST", "/api/v1/chat/runs", '{"message":"hi","workflow_id":"wf_1","on_busy":"enqueue"}'],
        ["GET", "/api/v1/chat/runs/wf_1/step_1", ""],
        ["POST", "/api/v1/chat/runs/wf_1/step_1/resume", '{"approval":"approve","pause":1}'],
        [
          "POST",
          "/api/v1/chat/runs/wf_1/step_1/resume",
          '{"approval":"approve","background":true}',
        ],
        ["POST", "/api/v1/chat/runs/wf_1/step_1/cancel", ""],
        ["POST", "/api/v1/chat/runs/wf_1/step_1/resume", '{"pause":0}'],
      ],
    );
  });
});

describe("chat client: the steps waiting (approvals list)", () => {
  const waiting = {
    workflow_id: "wf_2",
    step_id: "step_9",
    pause: 1,
    pending: [{ kind: "approval", detail: "sending needs approval" }],
    draft: "Release is out",
    message: "tell the team",
    asked_by: { user_id: "ana", agent_id: "chat", workflow_id: "wf_2" },
    asked_at: new Date(0).toISOString(),
    created_at: new Date(0).toISOString(),
  };
  let host: LoopbackServer;
  before(async () => {
    host = await startLoopbackServer((request, response) => {
      const url = new URL(request.url ?? "", "http://host");
      if (url.pathname !== "/api/v1/chat/runs" || request.method !== "GET") {
        return sendJson(response, 404, { error: "not found" });
      }
      if (url.searchParams.get("limit") === "0") {
        return sendJson(response, 400, { error: "limit must be an integer from 1 to 200" });
      }
      const first = !url.searchParams.has("cursor");
      return sendJson(response, 200, {
        runs: first ? [waiting] : [],
        ...(first ? { next_cursor: "c1" } : {}),
      });
    });
  });
  after(() => host.close());

  it("lists the approvals page by page on GET /chat/runs?status=yielded", async () => {
    const chat = createChatClient({ baseUrl: `${host.url}/api/v1` });
    const page = await chat.waiting({ pending: "approval", limit: 1 });
    assert.deepEqual(page, { runs: [waiting], next_cursor: "c1" });
    const next = await chat.waiting({ pending: "approval", limit: 1, cursor: page.next_cursor });
    assert.deepEqual(next, { runs: [] });
    await chat.waiting();
    const refused = await chat.waiting({ limit: 0 }).catch((error) => error);
    assert.ok(refused instanceof AtriumHttpError);
    assert.equal(refused.status, 400);
    assert.deepEqual(
      host.requests.map((r) => [r.method, r.url]),
      [
        ["GET", "/api/v1/chat/runs?status=yielded&pending=approval&limit=1"],
        ["GET", "/api/v1/chat/runs?status=yielded&pending=approval&limit=1&cursor=c1"],
        ["GET", "/api/v1/chat/runs?status=yielded"],
        ["GET", "/api/v1/chat/runs?status=yielded&limit=0"],
      ],
    );
  });
});
