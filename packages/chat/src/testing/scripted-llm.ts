import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedLlmRequest {
  model: string;
  messages: { role: string; content: string }[];
  stream?: boolean;
  response_format?: { type: string; json_schema?: { name: string } };
  authorization?: string;
}

export interface ScriptedReply {
  content: string;
  /** Answer with this HTTP status and an error body instead. */
  status?: number;
}

export type LlmScript = (request: ScriptedLlmRequest) => ScriptedReply;

export interface ScriptedLlm {
  baseUrl: string;
  requests: ScriptedLlmRequest[];
  close(): Promise<void>;
}

const words = (text: string) => text.match(/\S+\s*|\s+/g) ?? [];

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return JSON.parse(text) as Record<string, unknown>;
}

/**
 * An OpenAI-compatible `/v1/chat/completions` server on loopback whose answers come from a
 * script, so the kernel runs through the real LLM client: JSON and streamed (SSE) replies with
 * usage, and HTTP errors.
 */
export async function startScriptedLlm(script: LlmScript): Promise<ScriptedLlm> {
  const requests: ScriptedLlmRequest[] = [];
  const server = createServer(async (req, res) => {
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404).end();
      return;
    }
    const body = (await readJson(req)) as unknown as ScriptedLlmRequest;
    body.authorization = req.headers.authorization;
    requests.push(body);
    const reply = script(body);
    if (reply.status && reply.status >= 400) {
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: reply.content } }));
      return;
    }
    const promptTokens = body.messages.reduce((n, m) => n + words(m.content).length, 0);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: words(reply.content).length,
      total_tokens: promptTokens + words(reply.content).length,
    };
    const base = { id: "chatcmpl-test", object: "chat.completion", model: body.model };
    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          ...base,
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: reply.content },
              finish_reason: "stop",
            },
          ],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (chunk: unknown) => res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    for (const token of words(reply.content)) {
      send({ ...base, choices: [{ index: 0, delta: { content: token }, finish_reason: null }] });
    }
    send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
    send({ ...base, choices: [], usage });
    res.end("data: [DONE]\n\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
