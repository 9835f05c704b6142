import { createOpenAiHttp, OpenAiError, type OpenAiHttpOptions } from "@atrium/kit";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface JsonSchemaFormat {
  name: string;
  /** A JSON Schema object; sent with `strict: true`. */
  schema: Record<string, unknown>;
}

/** The LLM port: one structured completion. Absent by default; every caller has a fallback. */
export interface Llm {
  readonly model: string;
  completeJson(messages: ChatMessage[], format: JsonSchemaFormat): Promise<unknown>;
}

export interface OpenAiLlmOptions extends OpenAiHttpOptions {
  model: string;
}

interface ChatCompletionResponse {
  choices?: { message?: { content?: string | null; refusal?: string | null } }[];
}

/** Any OpenAI-compatible chat completions endpoint with JSON-schema structured output. */
export function createOpenAiLlm(options: OpenAiLlmOptions): Llm {
  const http = createOpenAiHttp(options);
  return {
    model: options.model,
    async completeJson(messages, format) {
      const answer = (await http.postJson("/chat/completions", {
        model: options.model,
        messages,
        temperature: 0,
        response_format: {
          type: "json_schema",
          json_schema: { name: format.name, schema: format.schema, strict: true },
        },
      })) as ChatCompletionResponse;
      const message = answer.choices?.[0]?.message;
      if (!message?.content) {
        throw new OpenAiError(
          `chat completion without content${message?.refusal ? ` (refusal: ${message.refusal})` : ""}`,
        );
      }
      try {
        return JSON.parse(message.content);
      } catch {
        throw new OpenAiError(`chat completion for ${format.name} is not JSON`);
      }
    },
  };
}
