import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { createLlmClient } from "../llm/llm-client.js";
import { createMemoryGateway } from "../memory/memory-gateway.js";
import { createKernelHarness } from "../testing/kernel-harness.js";
import { startFakeMemory } from "../testing/memory-server.js";
import { type LlmScript, startScriptedLlm } from "../testing/scripted-llm.js";
import type { TraceEvent } from "../trace/trace-event.js";
import { classifyRole } from "./role-router.js";

const types = (events: TraceEvent[]) => events.map((e) => e.type);
const tools = (events: TraceEvent[]) =>
  events.filter((e) => e.type === "tool_start").map((e) => e.data.tool);

/** A loopback HTTP server answering every request with `body` (HTML) and recording posts. */
async function startSite(body: string) {
  const posts: string[] = [];
  const server = createServer(async (req, res) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    if (req.method === "POST") posts.push(text);
    res.writeHead(200, { "content-type": "text/html" }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function withLlm(script: LlmScript) {
  const server = await startScriptedLlm(script);
  return { server, llm: createLlmClient({ baseUrl: server.baseUrl, model: "test-model" }) };
}

const article = `<html><head><title>Otters</title></head><body><nav>Home | About</nav><article>
<h1>Sea otters</h1><p>${"Sea otters hold hands while sleeping so they do not drift apart. ".repeat(8)}</p>
<p>They use rocks as tools.</p></article><footer>copyright</footer></body></html>`;

test("the classifier routes without an LLM, as documented", () => {
  assert.equal(classifyRole("What is the capital of France?").role, "researcher");
  assert.equal(classifyRole("write a function that sorts numbers").role, "coder");
  assert.equal(classifyRole("compute 17 * 23").role, "coder");
  assert.equal(classifyRole("open https://example.org and read the title").role, "browser");
  assert.equal(classifyRole("open the pod bay doors").role, "researcher", "browser needs a URL");
  assert.equal(classifyRole("send an email to Bob about the release").role, "communicator");
  assert.equal(classifyRole("hello there").by, "classifier");
  // A bare domain is a URL; "tell me" is a question, "tell <someone>" a message.
  assert.equal(classifyRole("open example.com and tell me what it says").role, "browser");
  assert.equal(classifyRole("Tell me about my allergy to peanuts").role, "researcher");
  assert.equal(classifyRole("tell the team the release is out").role, "communicator");
});

test("without an LLM each answer names the setting to change, and the trace announces only runs that happen", async (t) => {
  const h = await createKernelHarness({});
  t.after(() => h.close());
  const thoughts = (events: TraceEvent[]) =>
    events.filter((e) => e.type === "thinking").map((e) => String(e.data.thought));

  const unknown = await h.run("Who wrote Pride and Prejudice?");
  assert.equal(unknown.output.status, "failure");
  assert.match(unknown.output.summary ?? "", /set LLM_BASE_URL/);
  assert.deepEqual(unknown.output.metadata.runs, [{ role: "researcher", status: "failure" }]);
  assert.ok(!thoughts(unknown.events).some((t) => /(^|; )running coder/.test(t)));
  assert.ok(thoughts(unknown.events).some((t) => /^not running coder: .*LLM_BASE_URL/.test(t)));

  const code = await h.run("write a function that reverses a string");
  assert.equal(code.output.status, "failure");
  assert.match(code.output.summary ?? "", /set LLM_BASE_URL/);
  assert.deepEqual(code.output.metadata.runs, [{ role: "coder", status: "failure" }]);
  assert.ok(!thoughts(code.events).some((t) => /(^|; )running researcher/.test(t)));

  for (const context of [{}, { approved: true }]) {
    const page = await h.run("open example.com and tell me what it says", { context });
    assert.equal(page.output.status, "yield");
    assert.equal(page.output.metadata.role, "browser");
    assert.match(page.output.summary ?? "", /AGENT_ALLOWED_HOSTS=example\.com/);
    assert.match(
      page.output.metadata.pending?.[0].detail ?? "",
      /https:\/\/example\.com.*AGENT_ALLOWED_HOSTS/,
    );
  }

  const send = await h.run("send a message to the team: release is out");
  assert.equal(send.output.status, "yield");
  assert.match(send.output.summary ?? "", /COMMUNICATOR_WEBHOOK_URL is not configured/);
});

test("an extractive answer quotes each memory once", async (t) => {
  const note = "I am allergic to peanuts. I'll keep the peanut allergy in mind.";
  const memory = await startFakeMemory([note, note]);
  t.after(() => memory.close());
  const gateway = createMemoryGateway({ url: memory.url });
  t.after(() => gateway.close());
  const h = await createKernelHarness({ memory: gateway });
  t.after(() => h.close());
  const { output } = await h.run("Tell me about my allergy to peanuts");
  assert.equal(output.status, "success");
  assert.equal(output.metadata.role, "researcher");
  assert.equal(output.summary, note);
  // The quote of memory is stored as memory's, not the agent's (it would echo as new evidence).
  assert.deepEqual(
    memory.stored.map((s) => [s.userMessage, s.agentResponse, s.agentResponseSource]),
    [["Tell me about my allergy to peanuts", note, "memory"]],
  );
});

test("without an LLM the coder runs the message's own code block in the sandbox", async (t) => {
  const h = await createKernelHarness({});
  t.after(() => h.close());
  const { output, events } = await h.run("Please run this code:\n```js\nconsole.log(6 * 7)\n```");
  assert.equal(output.status, "success");
  assert.equal(output.summary, "42");
  assert.equal(output.metadata.role, "coder");
  assert.deepEqual(tools(events), ["sandbox.run"]);
  const result = events.find((e) => e.type === "tool_result")!;
  assert.equal(result.data.ok, true);
  assert.equal(result.data.agent, "coder");
  assert.equal(typeof result.data.duration_ms, "number");
});

test("with an LLM: structured routing, streamed code, tokens, system prompt", async (t) => {
  const { server, llm } = await withLlm((req) =>
    req.response_format
      ? { content: '{"role":"coder","reason":"arithmetic"}' }
      : { content: "```javascript\nconsole.log([3,1,2].sort().join(','))\n```" },
  );
  t.after(() => server.close());
  const h = await createKernelHarness({ llm });
  t.after(() => h.close());
  const { output, events } = await h.run("sort 3 1 2", { systemPrompt: "Be terse." });
  assert.equal(output.status, "success");
  assert.equal(output.summary, "1,2,3");
  assert.deepEqual(output.metadata.route, { by: "llm", reason: "arithmetic" });
  assert.equal(server.requests.length, 2);
  for (const req of server.requests)
    assert.deepEqual(req.messages[0], { role: "system", content: "Be terse." });
  assert.equal(server.requests[0].stream, false, "the router asks for structured output");
  assert.equal(server.requests[1].stream, true, "the coder streams its tokens");
  const tokens = output.metadata.tokens!;
  assert.ok(tokens.total_tokens! > 0);
  assert.equal(tokens.total_tokens, tokens.prompt_tokens! + tokens.completion_tokens!);
  const requests = events.filter((e) => e.type === "llm_request");
  const responses = events.filter((e) => e.type === "llm_response");
  assert.equal(requests.length, 2);
  assert.equal(responses.length, 2);
  assert.equal(responses[1].data.model, "test-model");
  const streamed = events.filter((e) => e.type === "thinking" && e.data.phase === "write_code");
  assert.ok(streamed.length >= 2, "code tokens stream into thinking events");
  assert.match(streamed.map((e) => e.data.thought).join(""), /^```javascript\nconsole.log/);
  assert.ok(types(events).indexOf("llm_request") < types(events).indexOf("tool_start"));
});

test("context.role wins over the router, and a failing coder falls back through the researcher", async (t) => {
  let codeCalls = 0;
  const { server, llm } = await withLlm((req) => {
    const last = req.messages.at(-1)!.content;
    if (last.startsWith("Question:")) return { content: "Use Math.max to find the largest." };
    codeCalls++;
    return codeCalls <= 3
      ? { content: "```js\nthrow new Error('bad idea')\n```" }
      : { content: "```js\nconsole.log(Math.max(4, 9, 2))\n```" };
  });
  t.after(() => server.close());
  const h = await createKernelHarness({ llm });
  t.after(() => h.close());
  const { output } = await h.run("largest of 4 9 2", { context: { role: "coder" } });
  assert.equal(output.metadata.role, "coder");
  assert.deepEqual(output.metadata.route, { by: "context", reason: "context.role" });
  assert.deepEqual(output.metadata.runs, [
    { role: "coder", status: "failure" },
    { role: "researcher", status: "success" },
    { role: "coder", status: "success" },
  ]);
  assert.equal(output.summary, "9");
  assert.ok(!server.requests.some((r) => r.response_format), "no LLM routing with context.role");
  const retry = server.requests.at(-1)!.messages.at(-1)!.content;
  assert.match(retry, /researcher found: Use Math.max/, "the second coder run sees the research");
});

test("the researcher uses memory over gRPC and reads allowed pages; others need approval", async (t) => {
  const memory = await startFakeMemory(["Otters were discussed last week: the user likes otters."]);
  t.after(() => memory.close());
  const site = await startSite(article);
  t.after(() => site.close());
  const gateway = createMemoryGateway({ url: memory.url, apiKey: "mem-key" });
  t.after(() => gateway.close());
  const h = await createKernelHarness({ memory: gateway, allowedHosts: ["127.0.0.1"] });
  t.after(() => h.close());

  const { output, events } = await h.run(`What do otters do? See ${site.url}/otters.`, {
    context: { tenant_id: "t1", user_id: "u1" },
    agentId: "helper",
  });
  assert.equal(output.status, "success");
  assert.equal(output.metadata.role, "researcher");
  assert.deepEqual(tools(events), ["memory.context", "memory.search", "web.fetch"]);
  assert.deepEqual(
    output.metadata.sources?.map((s) => s.source),
    ["memory", "web"],
  );
  assert.equal(output.metadata.sources?.[1].title, "Otters");
  assert.match(output.summary ?? "", /hold hands while sleeping/);
  assert.doesNotMatch(output.summary ?? "", /copyright|Home \| About/, "boilerplate is dropped");
  assert.deepEqual(memory.sessions[0], { tenantId: "t1", userId: "u1", agentId: "helper" });
  assert.equal(memory.apiKeys[0], "mem-key");
  assert.equal(memory.stored.length, 1, "the finished turn is stored in memory");

  const refused = await h.run("What does https://example.com/private say about otters?");
  assert.equal(refused.output.status, "success", "memory still answers");
  const blocked = await h.run("Summarize https://example.com/zebras");
  assert.equal(blocked.output.status, "yield");
  assert.equal(blocked.output.metadata.pending?.[0].kind, "approval");
  assert.match(blocked.output.metadata.pending?.[0].detail ?? "", /example\.com/);
});

test("the communicator yields without a webhook or approval, and sends with both", async (t) => {
  const hook = await startSite("ok");
  t.after(() => hook.close());
  const unconfigured = await createKernelHarness({});
  t.after(() => unconfigured.close());
  const missing = await unconfigured.run("send a message to the team: release is out");
  assert.equal(missing.output.status, "yield");
  assert.equal(missing.output.metadata.pending?.length, 1);
  assert.equal(missing.output.metadata.pending?.[0].kind, "credentials");
  assert.match(
    missing.output.metadata.pending?.[0].detail ?? "",
    /COMMUNICATOR_WEBHOOK_URL is not configured and no connection was named/,
  );

  const { server, llm } = await withLlm((req) =>
    req.response_format
      ? { content: '{"role":"communicator","reason":"send"}' }
      : { content: "Team, the release is out." },
  );
  t.after(() => server.close());
  const h = await createKernelHarness({ llm, communicatorWebhookUrl: `${hook.url}/hook` });
  t.after(() => h.close());
  const unapproved = await h.run("tell the team the release is out");
  assert.equal(unapproved.output.status, "yield");
  assert.equal(unapproved.output.metadata.pending?.[0].kind, "approval");
  assert.equal(hook.posts.length, 0);
  const sent = await h.run("tell the team the release is out", { context: { approved: true } });
  assert.equal(sent.output.status, "success");
  assert.deepEqual(JSON.parse(hook.posts[0]), {
    text: "Team, the release is out.",
    workflow_id: "wf_kernel",
    agent_id: "chat",
  });
  const toolStart = sent.events.find((e) => e.type === "tool_start");
  assert.doesNotMatch(JSON.stringify(toolStart), /\/hook/, "the webhook URL stays out of traces");
});

test("rejected LLM credentials yield; an exhausted token budget stops the step", async (t) => {
  const denied = await withLlm(() => ({ content: "invalid api key", status: 401 }));
  t.after(() => denied.server.close());
  const h = await createKernelHarness({ llm: denied.llm });
  t.after(() => h.close());
  const { output } = await h.run("explain monads", { context: { role: "researcher" } });
  assert.equal(output.status, "yield");
  assert.match(output.metadata.pending?.[0].detail ?? "", /HTTP 401/);

  const chatty = await withLlm(() => ({
    content: `${"word ".repeat(60)}\n\`\`\`js\nthrow 1\n\`\`\``,
  }));
  t.after(() => chatty.server.close());
  const tight = await createKernelHarness({
    llm: chatty.llm,
    budgets: { coder: { maxTokens: 100 } },
  });
  t.after(() => tight.close());
  const stopped = await tight.run("write code", { context: { role: "coder" } });
  assert.equal(stopped.output.status, "failure");
  assert.match(stopped.output.summary ?? "", /tokens budget is exhausted/);
  assert.equal(
    stopped.output.metadata.budget &&
      (stopped.output.metadata.budget as { exhausted: string }).exhausted,
    "tokens",
  );
});

test("the browser falls back to plain HTTP with a note when Chromium is missing", async (t) => {
  const site = await startSite(article);
  t.after(() => site.close());
  const h = await createKernelHarness({
    allowedHosts: ["127.0.0.1"],
    chromiumPath: "/nonexistent/chromium",
  });
  t.after(() => h.close());
  const { output } = await h.run(`open ${site.url}/page and tell me what it says`);
  assert.equal(output.status, "success");
  assert.equal(output.metadata.role, "browser");
  assert.match(output.summary ?? "", /^Otters: Sea otters\nSea otters hold hands/);
  assert.match(output.summary ?? "", /no Chromium found.*plain HTTP/s);
  assert.deepEqual(output.metadata.sources, [
    { title: "Otters", url: `${site.url}/page`, source: "browser" },
  ]);
});

test("a resumed step sends the approved draft without observing, routing or drafting again", async (t) => {
  const hook = await startSite("ok");
  t.after(() => hook.close());
  const memory = await startFakeMemory(["The team channel is #release."]);
  t.after(() => memory.close());
  const { server, llm } = await withLlm((req) =>
    req.response_format
      ? { content: '{"role":"communicator","reason":"send"}' }
      : { content: "Team, the release is out." },
  );
  t.after(() => server.close());
  const h = await createKernelHarness({
    llm,
    memory: createMemoryGateway({ url: memory.url }),
    communicatorWebhookUrl: `${hook.url}/hook`,
  });
  t.after(() => h.close());
  const paused = await h.run("tell the team the release is out");
  assert.equal(paused.output.status, "yield");
  const checkpoint = paused.output.metadata.checkpoint;
  assert.ok(checkpoint, "a yield carries the checkpoint to resume from");
  const llmCalls = server.requests.length;
  const contextReads = memory.sessions.length;
  assert.deepEqual(tools(paused.events), ["memory.context"]);

  const trace = h.bus.forStep("wf_kernel", "step_resumed");
  const output = await h.kernel.execute({
    task: "tell the team the release is out",
    systemPrompt: "",
    context: { approved: true },
    agentId: "chat",
    trace,
    resume: { checkpoint: JSON.parse(JSON.stringify(checkpoint)) },
  });
  assert.equal(output.status, "success");
  assert.equal(JSON.parse(hook.posts[0]).text, "Team, the release is out.");
  assert.equal(server.requests.length, llmCalls, "no LLM call after the pause");
  assert.equal(memory.sessions.length, contextReads, "memory is not read again");
  const events = await h.bus.history("wf_kernel", "step_resumed");
  assert.deepEqual(tools(events), ["webhook.send"]);
  assert.match(String(events[0].data.thought), /^continuing communicator where the step paused/);
  assert.deepEqual(output.metadata.tokens, paused.output.metadata.tokens, "tokens carried over");

  await assert.rejects(
    h.kernel.execute({
      task: "x",
      systemPrompt: "",
      context: {},
      agentId: "chat",
      trace,
      resume: { checkpoint: { role: "nobody", index: 0, earlier: [] } },
    }),
    /checkpoint cannot be resumed/,
  );
});
