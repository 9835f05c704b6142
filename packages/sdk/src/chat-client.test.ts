import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { TraceEvent } from "./chat-types.js";
import { AtriumHttpError, createChatClient } from "./index.js";
import { type LoopbackServer, sendJson, startLoopbackServer } from "./testing/loopback-server.js";

const event = (seq: number, type: TraceEvent["type"] = "thinking"): TraceEvent => ({
  workflow_id: "wf_1",
  step_id: "step_1",
  type,
  timestamp: new Date(0).toISOString(),
  data: { thought: `t${seq}` },
  seq,
});

const frame = (e: TraceEvent) => `id: ${e.seq}\ndata: ${JSON.stringify(e)}\n\n`;

describe("chat client", () => {
  let host: LoopbackServer;
  let streamConnections = 0;
  let markOpenStreamClosed = () => {};
  const openStreamClosed = new Promise<void>((resolve) => {
    markOpenStreamClosed = resolve;
  });

  before(async () => {
    host = await startLoopbackServer((request, response) => {
      if (request.url === "/api/v1/chat") {
        const body = JSON.parse(request.body.toString());
        return sendJson(response, 200, {
          workflow_id: body.workflow_id,
          step_id: "step_1",
          status: "success",
          answer: "42",
          sources: [],
          tokens: {},
          elapsed_ms: 1,
        });
      }
      if (request.url === "/api/v1/chat/history/wf_1/step_1") {
        return sendJson(response, 200, { events: [event(1)] });
      }
      if (request.url === "/api/v1/chat/stream/wf_missing") {
        return sendJson(response, 404, { error: "unknown workflow" });
      }
      if (request.url === "/api/v1/chat/stream/wf_open") {
        // Stays open after one event; only the client can end it.
        response.writeHead(200, { "content-type": "text/event-stream" });
        response.write(frame(event(1)));
        response.once("close", markOpenStreamClosed);
        return;
      }
      if (request.url === "/api/v1/chat/stream/wf_1") {
        streamConnections += 1;
        response.writeHead(200, { "content-type": "text/event-stream" });
        if (streamConnections === 1) {
          // Two events and a heartbeat, then the connection drops mid-step.
          response.write(`retry: 10\n\n${frame(event(1))}: heartbeat\n\n${frame(event(2))}`);
          setTimeout(() => response.socket?.destroy(), 20);
          return;
        }
        const resumeFrom = Number(request.headers["last-event-id"]);
        response.end(
          `${frame(event(resumeFrom + 1))}${frame(event(resumeFrom + 2, "step_complete"))}`,
        );
      }
    });
  });
  after(() => host.close());

  const client = () =>
    createChatClient({ baseUrl: `${host.url}/api/v1`, headers: { authorization: "Bearer host" } });

  it("posts a chat message and reads the history", async () => {
    const answer = await client().send({ message: "meaning of life?", workflow_id: "wf_1" });
    assert.equal(answer.answer, "42");
    assert.equal(host.requests.at(-1)?.headers.authorization, "Bearer host");
    assert.match(String(host.requests.at(-1)?.headers["user-agent"]), /^atrium-sdk\//);
    const history = await client().history("wf_1", "step_1");
    assert.equal(history[0].seq, 1);
  });

  it("resumes a dropped trace stream with Last-Event-ID and stops at step_complete", async () => {
    const seen: number[] = [];
    for await (const traced of client().stream("wf_1")) seen.push(traced.seq ?? -1);
    assert.deepEqual(seen, [1, 2, 3, 4]);
    const streams = host.requests.filter((r) => r.url === "/api/v1/chat/stream/wf_1");
    assert.equal(streams.length, 2);
    assert.equal(streams[0].headers["last-event-id"], undefined);
    assert.equal(streams[1].headers["last-event-id"], "2");
    assert.equal(streams[1].headers.accept, "text/event-stream");
  });

  it("closes the connection when the consumer stops early", async () => {
    const stream = client().stream("wf_open");
    const first = await stream.next();
    assert.equal(first.value?.seq, 1);
    await stream.return();
    assert.equal((await stream.next()).done, true);
    await openStreamClosed;
  });

  it("surfaces a 4xx on the stream instead of reconnecting", async () => {
    const stream = client().stream("wf_missing");
    await assert.rejects(stream.next(), (error: unknown) => {
      assert.ok(error instanceof AtriumHttpError);
      assert.equal(error.status, 404);
      return true;
    });
  });
});
