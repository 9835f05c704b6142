import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

/** One scripted answer: a status and a JSON body, or a function of the request. */
export type ScriptedAnswer = Answer | ((request: RecordedRequest) => Answer);

interface Answer {
  status?: number;
  body: unknown;
  /** Holds the answer back, for timeout tests. */
  delayMs?: number;
}

export interface FakeOpenAi {
  /** Base URL including `/v1`, as the clients expect. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Queues answers for a path (`/v1/embeddings`, `/v1/chat/completions`); served in order. */
  script(path: string, ...answers: ScriptedAnswer[]): void;
  /** The answer used when a path's queue is empty. */
  fallback(path: string, answer: ScriptedAnswer): void;
  close(): Promise<void>;
}

/** A loopback OpenAI-compatible server with scripted answers, for testing the real clients. */
export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const queues = new Map<string, ScriptedAnswer[]>();
  const fallbacks = new Map<string, ScriptedAnswer>();
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = new URL(req.url ?? "/", "http://x").pathname;
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
    } catch {}
    const request = { path, headers: req.headers, body };
    requests.push(request);
    const answer = queues.get(path)?.shift() ?? fallbacks.get(path);
    if (!answer) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not scripted"}');
      return;
    }
    const { status, body: out, delayMs } = typeof answer === "function" ? answer(request) : answer;
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (res.destroyed) return;
    res.writeHead(status ?? 200, { "content-type": "application/json" }).end(JSON.stringify(out));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script(path, ...answers) {
      queues.set(path, [...(queues.get(path) ?? []), ...answers]);
    },
    fallback(path, answer) {
      fallbacks.set(path, answer);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** A chat completion body whose message content is `value` as JSON. */
export function chatAnswer(value: unknown): { body: unknown } {
  return {
    body: {
      id: "chatcmpl-test",
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: JSON.stringify(value) },
          finish_reason: "stop",
        },
      ],
    },
  };
}
