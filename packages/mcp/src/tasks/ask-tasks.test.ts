import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, test } from "node:test";
import { createFakeChat, type FakeChat } from "../testing/fake-chat.js";
import type { ToolContext } from "../tool-context.js";
import { createMcpHttpHandler } from "../transport/http-handler.js";

let chat: FakeChat;
let server: Server;
let url: URL;

const contextOf = (userId: string) =>
  ({
    scope: { tenantId: "t", userId, agentId: "a", workspaceId: "w" },
    get chat() {
      return chat.client;
    },
    limits: { timeoutMs: 1000, maxResponseBytes: 1024, maxRedirects: 0 },
    recordCall: () => {},
    onError: () => {},
  }) as unknown as Omit<ToolContext, "cancelled">;

before(async () => {
  const handler = createMcpHttpHandler();
  server = createServer(async (req, res) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    const user = String(req.headers["x-user"] ?? "u");
    await handler.handle(req, res, JSON.parse(text), {
      callerKey: user,
      context: contextOf(user),
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
});

beforeEach(() => {
  chat = createFakeChat();
});

after(() => {
  server.closeAllConnections();
  server.close();
});

const version = "2026-07-28";
const tasksExtension = { extensions: { "io.modelcontextprotocol/tasks": {} } };

interface Answer {
  status: number;
  result?: Record<string, unknown> & { content?: { text: string }[] };
  error?: { code: number; message: string; data?: unknown };
}

/** One 2026-07-28 request with the headers the revision asks for. */
async function call(
  method: string,
  params: Record<string, unknown> = {},
  options: { capabilities?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const name = params.name ?? params.taskId;
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": version,
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {}),
      ...options.headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": version,
          "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? tasksExtension,
        },
        ...params,
      },
    }),
  });
  return { status: res.status, ...((await res.json()) as Omit<Answer, "status">) };
}

const startTask = async (message = "book the flight") => {
  const answer = await call("tools/call", { name: "ask", arguments: { message } });
  assert.equal(answer.status, 200, JSON.stringify(answer));
  return answer.result as Record<string, unknown> & { taskId: string };
};

test("server/discover declares the Tasks extension (not 2025-11-25's capabilities.tasks)", async () => {
  const { result } = await call("server/discover");
  const capabilities = result?.capabilities as Record<string, unknown>;
  assert.deepEqual(capabilities.extensions, { "io.modelcontextprotocol/tasks": {} });
  assert.equal(capabilities.tasks, undefined);
});

test("ask from a client with the extension starts a background run and answers with its task", async () => {
  const task = await startTask();
  assert.equal(task.resultType, "task");
  assert.equal(task.status, "working");
  assert.match(task.taskId, /^mcp_[0-9a-f]{12}_[0-9a-f]{12}\.step_1$/);
  assert.match(String(task.createdAt), /^\d{4}-\d\d-\d\dT/);
  assert.match(String(task.lastUpdatedAt), /^\d{4}-\d\d-\d\dT/);
  assert.equal(task.ttlMs, null);
  assert.equal(task.pollIntervalMs, 1000);
  assert.ok(!("result" in task) && !("task" in task));
  const [start] = chat.calls;
  assert.equal(start.method, "start");
  assert.deepEqual((start.args[0] as { context: unknown }).context, {
    tenant_id: "t",
    user_id: "u",
  });
  assert.equal(chat.calls.filter((c) => c.method === "send").length, 0);
});

test("tasks/get follows the run and inlines ask's result when it completes", async () => {
  const { taskId } = await startTask();
  const working = await call("tasks/get", { taskId });
  assert.equal(working.result?.status, "working");
  assert.equal(working.result?.resultType, "complete");
  assert.ok(!("result" in (working.result ?? {})));
  const [workflowId] = taskId.split(".");
  chat.settle(workflowId, "completed", {
    status: "success",
    answer: "Booked: AF 1234",
    sources: [],
    tokens: {},
  });
  const done = await call("tasks/get", { taskId });
  assert.equal(done.result?.status, "completed");
  const result = done.result?.result as {
    structuredContent: Record<string, unknown>;
    content: unknown[];
  };
  assert.equal(result.structuredContent.answer, "Booked: AF 1234");
  assert.equal(result.structuredContent.workflow_id, workflowId);
  assert.ok(result.content.length > 0);
});

test("a run that broke (its host died, say) is a failed task with an error and no result", async () => {
  const { taskId } = await startTask();
  chat.settle(taskId.split(".")[0], "failed");
  const failed = await call("tasks/get", { taskId });
  assert.equal(failed.result?.status, "failed");
  const error = failed.result?.error as { code?: unknown } | undefined;
  assert.equal(typeof error?.code, "number");
  assert.ok(!("result" in (failed.result ?? {})));
});

test("tasks/cancel cancels the run and acks empty; on a finished task it acks without cancelling", async () => {
  const { taskId } = await startTask();
  const ack = await call("tasks/cancel", { taskId });
  assert.deepEqual(ack.result, { resultType: "complete" });
  assert.equal(chat.calls.filter((c) => c.method === "cancel").length, 1);
  assert.equal((await call("tasks/get", { taskId })).result?.status, "cancelled");
  const again = await call("tasks/cancel", { taskId });
  assert.deepEqual(again.result, { resultType: "complete" });
  assert.equal(chat.calls.filter((c) => c.method === "cancel").length, 1);
});

test("a yielded run is input_required; tasks/update with the decision resumes it", async () => {
  const { taskId } = await startTask();
  const [workflowId] = taskId.split(".");
  chat.yieldFor(workflowId, [{ kind: "approval", detail: "Send the email to bob@example.com?" }]);
  const waiting = await call("tasks/get", { taskId });
  assert.equal(waiting.result?.status, "input_required");
  const requests = waiting.result?.inputRequests as Record<
    string,
    { method: string; params: { mode: string; message: string } }
  >;
  const [key] = Object.keys(requests);
  assert.equal(requests[key].method, "elicitation/create");
  assert.equal(requests[key].params.mode, "form");
  assert.equal(requests[key].params.message, "Send the email to bob@example.com?");

  const partial = await call("tasks/update", { taskId, inputResponses: {} });
  assert.equal(partial.error?.code, -32602);
  assert.match(partial.error?.message ?? "", new RegExp(key));

  const ack = await call("tasks/update", {
    taskId,
    inputResponses: { [key]: { action: "accept", content: { decision: "approve" } } },
  });
  assert.deepEqual(ack.result, { resultType: "complete" });
  const resumed = chat.calls.find((c) => c.method === "resumeInBackground");
  assert.deepEqual(resumed?.args, [workflowId, "step_1", { pause: 1, approval: "approve" }]);
  assert.equal((await call("tasks/get", { taskId })).result?.status, "working");

  // The pause was answered: a second update finds nothing waiting.
  const stale = await call("tasks/update", {
    taskId,
    inputResponses: { [key]: { action: "accept", content: { decision: "approve" } } },
  });
  assert.equal(stale.error?.code, -32602);
});

test("a consent the run waits for is a URL-mode input request with the authorization URL", async () => {
  const { taskId } = await startTask();
  chat.yieldFor(taskId.split(".")[0], [
    {
      kind: "consent",
      provider: "github",
      authorization_url: "https://gateway.example/connect/github?state=abc",
      detail: "to read your repositories",
    },
  ]);
  const waiting = await call("tasks/get", { taskId });
  const requests = Object.values(
    waiting.result?.inputRequests as Record<string, { params: Record<string, unknown> }>,
  );
  assert.equal(requests.length, 1);
  assert.equal(requests[0].params.mode, "url");
  assert.equal(requests[0].params.url, "https://gateway.example/connect/github?state=abc");
  assert.match(String(requests[0].params.elicitationId), /^consent:/);
});

test("ask with resume and a decision resumes the yielded run as the same task", async () => {
  const { taskId } = await startTask();
  const [workflowId, stepId] = taskId.split(".");
  chat.yieldFor(workflowId, [{ kind: "credentials", detail: "a GitHub connection" }]);
  const resumed = await call("tools/call", {
    name: "ask",
    arguments: {
      resume: { workflow_id: workflowId, step_id: stepId, connection_id: "conn_9" },
    },
  });
  assert.equal(resumed.result?.resultType, "task");
  assert.equal(resumed.result?.taskId, taskId);
  assert.equal(resumed.result?.status, "working");
  assert.deepEqual(chat.calls.at(-1)?.args, [
    workflowId,
    stepId,
    { pause: 1, approval: undefined, connection_id: "conn_9" },
  ]);
});

test("tasks methods need the extension declared on the request: 400 -32021", async () => {
  const { taskId } = await startTask();
  for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
    const answer = await call(method, { taskId, inputResponses: {} }, { capabilities: {} });
    assert.equal(answer.status, 400, method);
    assert.equal(answer.error?.code, -32021, method);
    assert.deepEqual(answer.error?.data, {
      requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } },
    });
  }
});

test("without the extension ask runs in the request, as before", async () => {
  const answer = await call(
    "tools/call",
    { name: "ask", arguments: { message: "hi" } },
    { capabilities: {} },
  );
  assert.equal(answer.result?.resultType, "complete");
  assert.equal(answer.result?.taskId, undefined);
  assert.deepEqual(
    chat.calls.map((c) => c.method),
    ["send"],
  );
});

test("another user's task, a malformed id and an unknown one are unknown tasks (-32602)", async () => {
  const { taskId } = await startTask();
  const foreign = await call("tasks/get", { taskId }, { headers: { "x-user": "mallory" } });
  assert.equal(foreign.error?.code, -32602);
  const cancel = await call("tasks/cancel", { taskId }, { headers: { "x-user": "mallory" } });
  assert.equal(cancel.error?.code, -32602);
  assert.equal(chat.calls.filter((c) => c.method === "cancel").length, 0);
  assert.equal((await call("tasks/get", { taskId: "nonsense" })).error?.code, -32602);
  const unknown = `${taskId.split(".")[0]}.step_9`;
  assert.equal((await call("tasks/get", { taskId: unknown })).error?.code, -32602);
});

test("Mcp-Name must be the task id; tasks/result and tasks/list are not methods of this revision", async () => {
  const { taskId } = await startTask();
  const mismatch = await call("tasks/get", { taskId }, { headers: { "mcp-name": "other" } });
  assert.equal(mismatch.status, 400);
  assert.equal(mismatch.error?.code, -32020);
  for (const method of ["tasks/result", "tasks/list"]) {
    const answer = await call(method, { taskId });
    assert.equal(answer.status, 404, method);
    assert.equal(answer.error?.code, -32601, method);
  }
});
