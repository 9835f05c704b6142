import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { eventually, needsServer, serverAvailable } from "@atrium/kit/testing";
import { type McpStack, startMcpStack } from "./mcp-e2e-harness.js";

/**
 * Background ask through the gateway's /mcp as a 2026-07-28 client with the Tasks extension
 * drives it, against the chat router's real runs (background start, resume, cancel) and a
 * scripted kernel: a task completes, yields for an approval and resumes, and is cancelled.
 */
let stack: McpStack;

before(async () => {
  if (!(await serverAvailable("postgres"))) return;
  stack = await startMcpStack();
});

after(async () => {
  await stack?.stop();
});

const version = "2026-07-28";

interface Answer {
  status: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

let nextId = 1;

async function mcp(key: string, method: string, params: Record<string, unknown>): Promise<Answer> {
  const name = params.name ?? params.taskId;
  const res = await fetch(`${stack.gatewayUrl}/mcp`, {
    method: "POST",
    headers: {
      "x-api-key": key,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": version,
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": version,
          "io.modelcontextprotocol/clientCapabilities": {
            extensions: { "io.modelcontextprotocol/tasks": {} },
          },
        },
      },
    }),
  });
  return { status: res.status, ...((await res.json()) as Omit<Answer, "status">) };
}

const startAsk = async (key: string, message: string) => {
  const started = await mcp(key, "tools/call", { name: "ask", arguments: { message } });
  assert.equal(started.result?.resultType, "task", JSON.stringify(started));
  return String(started.result?.taskId);
};

async function until(key: string, taskId: string, status: string) {
  let task: Record<string, unknown> | undefined;
  await eventually(`task ${taskId} is ${status}`, async () => {
    task = (await mcp(key, "tasks/get", { taskId })).result;
    return task?.status === status;
  });
  return task as Record<string, unknown>;
}

test("a background ask completes and tasks/get inlines its answer", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const taskId = await startAsk(stack.keys.alice, "summarize my week");
  const done = await until(stack.keys.alice, taskId, "completed");
  const result = done.result as { structuredContent: Record<string, unknown> };
  assert.equal(result.structuredContent.answer, "answer to: summarize my week");
  assert.equal(result.structuredContent.status, "success");
  // Bob's key does not reach alice's task.
  const foreign = await mcp(stack.keys.bob, "tasks/get", { taskId });
  assert.equal(foreign.error?.code, -32602);
});

test("a yielded ask is input_required; tasks/update approves it and the step resumes to its end", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const started = stack.kernelCalls.length;
  const taskId = await startAsk(stack.keys.alice, "email bob, ask my approval");
  const waiting = await until(stack.keys.alice, taskId, "input_required");
  const requests = waiting.inputRequests as Record<string, { params: { message: string } }>;
  const [key] = Object.keys(requests);
  assert.equal(requests[key].params.message, "send the email to bob@example.com");
  const ack = await mcp(stack.keys.alice, "tasks/update", {
    taskId,
    inputResponses: { [key]: { action: "accept", content: { decision: "approve" } } },
  });
  assert.deepEqual(ack.result, { resultType: "complete" });
  const done = await until(stack.keys.alice, taskId, "completed");
  assert.equal(
    (done.result as { structuredContent: { answer: string } }).structuredContent.answer,
    "email sent",
  );
  // One run before the pause and one resumption: the kernel ran twice, not three times.
  assert.equal(stack.kernelCalls.length - started, 2);
});

test("tasks/cancel stops a running background ask: the kernel is aborted, the task cancelled", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const started = stack.kernelCalls.length;
  const taskId = await startAsk(stack.keys.alice, "wait for me in the background");
  await until(stack.keys.alice, taskId, "working");
  await eventually("the kernel runs the step", () => stack.kernelCalls.length > started);
  const ack = await mcp(stack.keys.alice, "tasks/cancel", { taskId });
  assert.deepEqual(ack.result, { resultType: "complete" });
  await until(stack.keys.alice, taskId, "cancelled");
  await eventually("the kernel saw the cancellation", () => stack.kernelCalls[started]?.aborted);
});
