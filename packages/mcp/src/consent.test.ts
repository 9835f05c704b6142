import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, test } from "node:test";
import { AttentionRequiredError } from "@atrium/sdk";
import { consentItemsOf } from "./consent.js";
import { createFakeChat, type FakeChat } from "./testing/fake-chat.js";
import type { ToolContext } from "./tool-context.js";
import { createMcpHttpHandler } from "./transport/http-handler.js";

const consent = {
  kind: "consent",
  provider: "github",
  authorization_url: "https://gateway.example/v1/connect/github?state=s1",
  detail: "to read your repositories",
};

let chat: FakeChat;
let server: Server;
let url: URL;

const context = {
  scope: { tenantId: "t", userId: "u", agentId: "a", workspaceId: "w" },
  get chat() {
    return chat.client;
  },
  limits: { timeoutMs: 1000, maxResponseBytes: 1024, maxRedirects: 0 },
  // The gateway refuses a connection that needs a new consent, offering its connect flow.
  apiBaseUrl: async (connectionId: string) => {
    throw new AttentionRequiredError(connectionId, 409, {
      detail: "attention_required",
      pending: [consent],
    });
  },
  recordCall: () => {},
  onError: () => {},
} as unknown as Omit<ToolContext, "cancelled">;

before(async () => {
  const handler = createMcpHttpHandler();
  server = createServer(async (req, res) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    await handler.handle(req, res, JSON.parse(text), { callerKey: "k", context });
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
const urlElicitation = { elicitation: { url: {} } };

interface Answer {
  result?: {
    isError?: boolean;
    structuredContent?: Record<string, unknown>;
    content?: { type: string; text: string }[];
  };
  error?: { code: number; message: string; data?: { elicitations: Record<string, unknown>[] } };
}

async function callTool(
  name: string,
  args: Record<string, unknown>,
  capabilities: Record<string, unknown>,
): Promise<Answer> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": version,
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name,
        arguments: args,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": version,
          "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
      },
    }),
  });
  return (await res.json()) as Answer;
}

test("only well-formed consent items with an http(s) URL are consent", () => {
  assert.deepEqual(
    consentItemsOf([
      consent,
      { kind: "approval", detail: "send?" },
      { ...consent, authorization_url: "javascript:alert(1)" },
      { kind: "consent", detail: "no provider" },
    ]),
    [consent],
  );
  assert.deepEqual(consentItemsOf(undefined), []);
});

test("ask that yields for consent: URL-mode elicitation (-32042) where the client declared it", async () => {
  chat.nextAnswer = { status: "yield", answer: "I need GitHub", pending: [consent] as never };
  const { error } = await callTool("ask", { message: "list my repos" }, urlElicitation);
  assert.equal(error?.code, -32042);
  const [elicitation] = error?.data?.elicitations ?? [];
  assert.equal(elicitation.mode, "url");
  assert.equal(elicitation.url, consent.authorization_url);
  assert.match(
    String(elicitation.elicitationId),
    /^consent:mcp_[0-9a-f]{12}_[0-9a-f]{12}\/step_1:github$/,
  );
  assert.match(String(elicitation.message), /github/);
  assert.match(error?.message ?? "", /resume/);
});

test("ask that yields for consent: a tool result with the URL in text and structured content otherwise", async () => {
  chat.nextAnswer = { status: "yield", answer: "I need GitHub", pending: [consent] as never };
  for (const capabilities of [{}, { elicitation: { form: {} } }]) {
    const { result, error } = await callTool("ask", { message: "list my repos" }, capabilities);
    assert.equal(error, undefined);
    assert.equal(result?.isError, undefined);
    assert.equal(result?.structuredContent?.status, "yield");
    assert.deepEqual(result?.structuredContent?.consent, [
      {
        provider: "github",
        authorization_url: consent.authorization_url,
        detail: consent.detail,
      },
    ]);
    assert.ok(result?.content?.[0].text.includes(consent.authorization_url));
  }
});

test("ask that yields for an approval is a plain result listing what is pending", async () => {
  chat.nextAnswer = {
    status: "yield",
    answer: "May I send it?",
    pending: [{ kind: "approval", detail: "send the email" }],
  };
  const { result } = await callTool("ask", { message: "email bob" }, urlElicitation);
  assert.deepEqual(result?.structuredContent?.pending, [
    { kind: "approval", detail: "send the email" },
  ]);
  assert.equal(result?.structuredContent?.consent, undefined);
});

test("http_request refused for a missing consent: elicitation where declared, the URL otherwise", async () => {
  const args = { connection_id: "conn_1", url: "/user/repos" };
  const elicited = await callTool("http_request", args, urlElicitation);
  assert.equal(elicited.error?.code, -32042);
  assert.equal(elicited.error?.data?.elicitations[0].url, consent.authorization_url);

  const { result } = await callTool("http_request", args, {});
  assert.ok(result?.isError);
  const items = result.structuredContent?.consent as { authorization_url: string }[] | undefined;
  assert.equal(items?.[0]?.authorization_url, consent.authorization_url);
  assert.ok(result?.content?.[0].text.includes(consent.authorization_url));
});

test("ask resume: a decision goes to the yielded step, which answers in the request", async () => {
  const first = await callTool("ask", { message: "email bob" }, {});
  const workflowId = String(first.result?.structuredContent?.workflow_id);
  // The synchronous ask's step, as the chat host records it once it yields.
  await chat.client.start({ message: "email bob", workflow_id: workflowId });
  chat.yieldFor(workflowId, [{ kind: "approval", detail: "send the email" }]);
  chat.nextAnswer = { status: "success", answer: "Sent." };
  const { result } = await callTool(
    "ask",
    { resume: { workflow_id: workflowId, step_id: "step_1", approval: "approve" } },
    {},
  );
  assert.equal(result?.structuredContent?.answer, "Sent.");
  const resume = chat.calls.find((c) => c.method === "resume");
  assert.deepEqual(resume?.args, [
    workflowId,
    "step_1",
    { pause: 1, approval: "approve", connection_id: undefined },
  ]);

  // Once answered, a second decision is refused with the step's state.
  const again = await callTool(
    "ask",
    { resume: { workflow_id: workflowId, step_id: "step_1", approval: "approve" } },
    {},
  );
  assert.equal(again.result?.isError, true);
  assert.match(again.result?.content?.[0].text ?? "", /completed, not waiting/);

  // Without a decision it answers the step's last answer.
  const read = await callTool(
    "ask",
    { resume: { workflow_id: workflowId, step_id: "step_1" } },
    {},
  );
  assert.equal(read.result?.structuredContent?.answer, "Sent.");
});

test("ask resume refuses another scope's workflow and a call with neither message nor resume", async () => {
  const foreign = await callTool(
    "ask",
    { resume: { workflow_id: "mcp_000000000000_abc", step_id: "step_1", approval: "approve" } },
    {},
  );
  assert.equal(foreign.result?.isError, true);
  assert.match(foreign.result?.content?.[0].text ?? "", /No step/);
  assert.equal(chat.calls.length, 0);
  const empty = await callTool("ask", {}, {});
  assert.equal(empty.result?.isError, true);
  assert.match(empty.result?.content?.[0].text ?? "", /needs message .* or resume/);
});
