import { randomUUID } from "node:crypto";
import { createOpenAiHttp, inSpan, OpenAiError } from "@atrium/kit";
import type { TokenUsage } from "../kernel/kernel-types.js";
import type { TraceEmitter } from "../trace/trace-bus.js";

/** Model tiers: the router gets a cheap model, each sub-agent role may get its own. */
export type LlmTier = "router" | "researcher" | "coder" | "browser" | "communicator";

export interface LlmConfig {
  /** OpenAI-compatible base URL including the version segment, e.g. https://api.openai.com/v1. */
  baseUrl: string;
  apiKey?: string;
  /** Model used by every tier without its own. */
  model: string;
  tierModels?: Partial<Record<LlmTier, string>>;
  /** Per call. Default 120 s. */
  timeoutMs?: number;
  /** Further tries after a rate limit, a 5xx or a network error. Default 2. */
  maxRetries?: number;
  /** First backoff; doubles per try, with full jitter. Default 500 ms. */
  retryBaseMs?: number;
}

export interface LlmMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface LlmJsonSchema {
  name: string;
  schema: Record<string, unknown>;
}

export interface LlmCallOptions {
  tier: LlmTier;
  /** Why the call is made (`route`, `answer`, `write_code`…); shown in the trace. */
  purpose: string;
  messages: LlmMessage[];
  trace: TraceEmitter;
  /** Streams tokens into `thinking` events. Ignored with `jsonSchema`. */
  streamThinking?: boolean;
  /** Structured output: the reply is JSON conforming to this schema. */
  jsonSchema?: LlmJsonSchema;
  maxTokens?: number;
  signal?: AbortSignal;
}

export interface LlmResult {
  text: string;
  model: string;
  usage: TokenUsage;
  finishReason: string | null;
}

/** The kit's OpenAI error, under the name chat's callers know (`isAuthFailure`, `retryable`). */
export { OpenAiError as LlmError };

export interface LlmClient {
  modelFor(tier: LlmTier): string;
  complete(options: LlmCallOptions): Promise<LlmResult>;
}

const emptyUsage = (): TokenUsage => ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

function usageOf(raw: unknown): TokenUsage | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const u = raw as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  const prompt = num(u.prompt_tokens);
  const completion = num(u.completion_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: num(u.total_tokens) || prompt + completion,
  };
}

interface ChunkChoice {
  delta?: { content?: string | null };
  message?: { content?: string | null };
  finish_reason?: string | null;
}

/** Reads an OpenAI-style SSE body, calling `onChunk` for each JSON `data:` payload. */
async function readEventStream(
  body: ReadableStream<Uint8Array>,
  onChunk: (chunk: Record<string, unknown>) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") return;
      try {
        onChunk(JSON.parse(data) as Record<string, unknown>);
      } catch {
        throw new OpenAiError("LLM stream sent a chunk that is not JSON");
      }
    }
  }
}

/** OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp server). */
export function createLlmClient(config: LlmConfig): LlmClient {
  const http = createOpenAiHttp({
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    timeoutMs: config.timeoutMs ?? 120_000,
    retries: config.maxRetries ?? 2,
    backoffMs: config.retryBaseMs ?? 500,
  });
  const modelFor = (tier: LlmTier) => config.tierModels?.[tier] ?? config.model;

  /** One HTTP call, between its own llm_request and llm_response events. */
  async function once(options: LlmCallOptions, attempt: number): Promise<LlmResult> {
    const model = modelFor(options.tier);
    const stream = options.streamThinking === true && !options.jsonSchema;
    const callId = randomUUID();
    const started = performance.now();
    const last = options.messages.at(-1)?.content ?? "";
    await options.trace.emit("llm_request", {
      call_id: callId,
      model,
      purpose: options.purpose,
      messages: options.messages.length,
      prompt_preview: last.slice(0, 300),
      stream,
      structured: Boolean(options.jsonSchema),
      attempt,
    });
    const body: Record<string, unknown> = { model, messages: options.messages, stream };
    if (stream) body.stream_options = { include_usage: true };
    if (options.maxTokens) body.max_tokens = options.maxTokens;
    if (options.jsonSchema) {
      body.response_format = {
        type: "json_schema",
        json_schema: {
          name: options.jsonSchema.name,
          strict: true,
          schema: options.jsonSchema.schema,
        },
      };
    }
    let text = "";
    let usage: TokenUsage | undefined;
    let finishReason: string | null = null;
    let answeredModel = model;
    try {
      const response = await http.post("/chat/completions", body, options.signal);
      if (stream && response.body) {
        await readEventStream(response.body, (chunk) => {
          if (typeof chunk.model === "string") answeredModel = chunk.model;
          usage = usageOf(chunk.usage) ?? usage;
          const choice = (chunk.choices as ChunkChoice[] | undefined)?.[0];
          if (choice?.finish_reason) finishReason = choice.finish_reason;
          const token = choice?.delta?.content;
          if (token) {
            text += token;
            // Not awaited: the trace bus keeps order, and the model should not wait on it.
            void options.trace.emit("thinking", { thought: token, phase: options.purpose });
          }
        });
      } else {
        const json = (await response.json()) as Record<string, unknown>;
        if (typeof json.model === "string") answeredModel = json.model;
        usage = usageOf(json.usage);
        const choice = (json.choices as ChunkChoice[] | undefined)?.[0];
        finishReason = choice?.finish_reason ?? null;
        text = choice?.message?.content ?? "";
      }
    } catch (error) {
      const failure =
        error instanceof OpenAiError
          ? error
          : OpenAiError.fromCause("LLM call failed", error, options.signal);
      // Tokens already streamed into the trace would be repeated by a retry.
      if (text !== "") failure.retryable = false;
      await options.trace.emit("llm_response", {
        call_id: callId,
        model,
        purpose: options.purpose,
        duration_ms: Math.round(performance.now() - started),
        error: failure.message,
      });
      throw failure;
    }
    const result: LlmResult = {
      text,
      model: answeredModel,
      usage: usage ?? emptyUsage(),
      finishReason,
    };
    await options.trace.emit("llm_response", {
      call_id: callId,
      model: answeredModel,
      purpose: options.purpose,
      duration_ms: Math.round(performance.now() - started),
      usage: result.usage,
      finish_reason: finishReason,
      output_chars: text.length,
    });
    return result;
  }

  const serverAddress = new URL(config.baseUrl).hostname;

  /**
   * The call as OpenTelemetry's GenAI conventions name it (`chat <model>`, a CLIENT span around
   * its tries, while tracing is on): models, tokens and finish reason, never the messages.
   */
  function complete(options: LlmCallOptions): Promise<LlmResult> {
    const model = modelFor(options.tier);
    const attributes = {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": model,
      "server.address": serverAddress,
      ...(options.maxTokens ? { "gen_ai.request.max_tokens": options.maxTokens } : {}),
    };
    const tries = () => http.retrying((attempt) => once(options, attempt), options.signal);
    return inSpan(
      "atrium-llm",
      `chat ${model}`,
      attributes,
      async (span) => {
        const result = await tries();
        span?.setAttribute("gen_ai.response.model", result.model);
        // An endpoint that reports no usage leaves the tokens unknown, not zero.
        if (result.usage.total_tokens > 0) {
          span?.setAttribute("gen_ai.usage.input_tokens", result.usage.prompt_tokens);
          span?.setAttribute("gen_ai.usage.output_tokens", result.usage.completion_tokens);
        }
        if (result.finishReason) {
          span?.setAttribute("gen_ai.response.finish_reasons", [result.finishReason]);
        }
        return result;
      },
      "client",
    );
  }

  return { modelFor, complete };
}
