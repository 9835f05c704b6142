import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { createGatewayClient } from "@atrium/sdk";
import { BudgetTracker, defaultBudgets } from "../kernel/budget.js";
import type { StepContext } from "../kernel/step-context.js";
import { createTraceBus } from "../trace/trace-bus.js";
import { createCommunicator } from "./communicator.js";
import { createUrlPolicy } from "./url-policy.js";

const token = "xoxb-secret-token-4242";

interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback HTTP server that records every request and answers with `reply`. */
async function serve(t: TestContext, reply: (req: Received, res: ServerResponse) => void) {
  const received: Received[] = [];
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const recorded = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body };
    received.push(recorded);
    reply(recorded, res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

/** The gateway's `GET /v1/token/{id}` answer for an OAuth connection (see docs/gateway.md). */
const oauthToken = (id: string) => ({
  connection_id: id,
  auth_type: "oauth2",
  status: "active",
  health_status: "healthy",
  access_token: token,
  token_type: "Bearer",
  scopes: ["chat:write"],
  id_token: "",
  api_key: "",
  username: "",
  password: "",
  name_id: "",
  attributes: {},
  strategy: { type: "oauth2" },
});

/** A gateway where `slack` is healthy, `stuck` needs a human, `gone` was revoked. */
async function startGateway(t: TestContext) {
  return serve(t, (req, res) => {
    const [, , kind, id] = req.path.split("?")[0].split("/");
    if (req.headers["x-api-key"] !== "agent-key") return json(res, 401, { error: "no key" });
    if (kind === "refresh") return json(res, 200, { connection_id: id, status: "active" });
    if (id === "stuck") return json(res, 409, { error: "attention_required" });
    if (id === "gone") return json(res, 410, { code: "connection_revoked" });
    if (id === "slack" || id === "refused") return json(res, 200, oauthToken(id));
    json(res, 404, { code: "NotFound", message: "connection not found" });
  });
}

/** A Slack-like API: takes the message with the right bearer token, refuses the rest. */
async function startSlack(t: TestContext) {
  return serve(t, (req, res) => {
    if (req.headers.authorization !== `Bearer ${token}` || req.path.includes("refused")) {
      return json(res, 401, { ok: false, error: "invalid_auth" });
    }
    json(res, 200, { ok: true, ts: "1700000000.000100" });
  });
}

async function stepFor(t: TestContext, context: Record<string, unknown>) {
  const dir = await mkdtemp(join(tmpdir(), "communicator-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const bus = createTraceBus({ tracesDir: dir });
  t.after(() => bus.close());
  const step: StepContext = {
    task: "Release 1.2 is out",
    systemPrompt: "",
    context,
    agentId: "chat",
    scope: { tenantId: "t", userId: "u", agentId: "chat" },
    trace: bus.forStep("wf_send", "s1"),
    signal: new AbortController().signal,
    llm: undefined,
    memory: undefined,
    earlier: [],
    budget: new BudgetTracker(defaultBudgets.communicator),
  };
  /** Every event as stored, and the trace files as written to disk. */
  const traces = async () => {
    const events = await bus.history("wf_send", "s1");
    const files = await readdir(dir, { recursive: true, withFileTypes: true });
    const written = await Promise.all(
      files.filter((f) => f.isFile()).map((f) => readFile(join(f.parentPath, f.name), "utf8")),
    );
    return { events, written: written.join("\n") };
  };
  return { step, traces };
}

/** Whatever this process writes to stdout or stderr while `run` runs. */
async function captureOutput<T>(run: () => Promise<T>): Promise<{ result: T; output: string }> {
  const chunks: string[] = [];
  const originals = [process.stdout.write, process.stderr.write] as const;
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write.bind(stream);
    stream.write = ((chunk: unknown, ...rest: never[]) => {
      chunks.push(String(chunk));
      return original(chunk as string, ...rest);
    }) as typeof stream.write;
  }
  try {
    return { result: await run(), output: chunks.join("") };
  } finally {
    [process.stdout.write, process.stderr.write] = originals;
  }
}

const communicatorFor = (gatewayUrl: string, extra = {}) =>
  createCommunicator({
    gateway: createGatewayClient({ baseUrl: gatewayUrl, apiKey: "agent-key" }),
    sendPolicy: createUrlPolicy(["127.0.0.1"]),
    ...extra,
  });

test("the communicator sends with a broker connection's token and never traces it", async (t) => {
  const gateway = await startGateway(t);
  const slack = await startSlack(t);
  const { step, traces } = await stepFor(t, {
    approved: true,
    connection_id: "slack",
    send_url: `${slack.url}/api/chat.postMessage`,
    channel: "#releases",
  });
  const { result, output } = await captureOutput(() => communicatorFor(gateway.url).run(step));
  assert.equal(result.status, "success");
  assert.deepEqual(result.payload, {
    draft: "Release 1.2 is out",
    connection_id: "slack",
    send_status: 200,
  });
  assert.equal(gateway.received[0].path, "/v1/token/slack");
  assert.equal(slack.received.length, 1);
  assert.equal(slack.received[0].headers.authorization, `Bearer ${token}`);
  assert.deepEqual(JSON.parse(slack.received[0].body), {
    text: "Release 1.2 is out",
    workflow_id: "wf_send",
    agent_id: "chat",
    channel: "#releases",
  });

  const { events, written } = await traces();
  const start = events.find((e) => e.type === "tool_start");
  const end = events.find((e) => e.type === "tool_result");
  assert.equal(start?.data.tool, "connection.send");
  assert.deepEqual(start?.data.arguments, {
    connection_id: "slack",
    host: new URL(slack.url).host,
    chars: 18,
  });
  assert.equal(end?.data.ok, true);
  assert.match(written, /connection\.send/, "the trace files were written");
  for (const [where, text] of Object.entries({
    events: JSON.stringify(events),
    written,
    output,
    result: JSON.stringify(result),
  })) {
    assert.doesNotMatch(text, new RegExp(token), `the token stays out of ${where}`);
  }
});

test("a connection a human must repair yields once, without retrying", async (t) => {
  const gateway = await startGateway(t);
  const slack = await startSlack(t);
  const cases = [
    { id: "stuck", detail: /redo the consent \(attention_required\)/ },
    { id: "gone", detail: /was revoked/ },
    { id: "missing", detail: /does not exist/ },
    { id: "refused", detail: /refused connection refused's credential \(HTTP 401\)/ },
  ];
  for (const { id, detail } of cases) {
    gateway.received.length = 0;
    const { step, traces } = await stepFor(t, {
      approved: true,
      connection_id: id,
      send_url: `${slack.url}/api/${id}`,
    });
    const result = await communicatorFor(gateway.url).run(step);
    assert.equal(result.status, "yield", id);
    assert.equal(result.pending?.length, 1);
    assert.equal(result.pending?.[0].kind, "credentials");
    assert.match(result.pending?.[0].detail ?? "", detail);
    assert.deepEqual(result.payload, { draft: "Release 1.2 is out", connection_id: id });
    const { events } = await traces();
    const end = events.find((e) => e.type === "tool_result");
    assert.equal(end?.data.ok, false, id);
    assert.doesNotMatch(JSON.stringify(events), new RegExp(token));
    const tokenCalls = gateway.received.filter((r) => r.path.startsWith("/v1/token/"));
    // The OAuth fetcher refreshes once on a 401 from the target; nothing else asks twice.
    assert.equal(tokenCalls.length, id === "refused" ? 2 : 1, id);
  }
  assert.equal(slack.received.filter((r) => r.path !== "/api/refused").length, 0);
});

test("sending with a connection waits for configuration, an allowed host and approval", async (t) => {
  const gateway = await startGateway(t);
  const slack = await startSlack(t);
  const send = { connection_id: "slack", send_url: `${slack.url}/api/chat.postMessage` };
  const run = async (communicator: ReturnType<typeof createCommunicator>, context = {}) =>
    communicator.run((await stepFor(t, context)).step);

  const noGateway = await run(createCommunicator({ sendPolicy: createUrlPolicy(["*"]) }), {
    ...send,
    approved: true,
  });
  assert.equal(noGateway.pending?.[0].kind, "credentials");
  assert.match(noGateway.pending?.[0].detail ?? "", /GATEWAY_URL is not configured/);

  const noUrl = await run(communicatorFor(gateway.url), { connection_id: "slack", approved: true });
  assert.match(noUrl.pending?.[0].detail ?? "", /COMMUNICATOR_SEND_URL/);

  const foreign = await run(
    communicatorFor(gateway.url, { sendPolicy: createUrlPolicy(["example.org"]) }),
    { ...send, approved: true },
  );
  assert.equal(foreign.pending?.[0].kind, "approval");
  assert.match(foreign.pending?.[0].detail ?? "", /AGENT_ALLOWED_HOSTS/);

  const unapproved = await run(communicatorFor(gateway.url), send);
  assert.equal(unapproved.pending?.[0].kind, "approval");

  // Configured defaults stand in for the request's connection_id and send_url.
  const configured = await run(
    communicatorFor(gateway.url, { connectionId: "slack", sendUrl: send.send_url }),
    { approved: true },
  );
  assert.equal(configured.status, "success");
  assert.equal(gateway.received.length, 1, "only the configured send asked for a token");
  assert.equal(slack.received.length, 1);
});
