import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { contextOf } from "../tool-context.js";
import { guarded, McpToolError, toolResult } from "../tool-result.js";

const metadata = z
  .record(z.string(), z.string())
  .optional()
  .describe("Optional string labels (for example project or topic) that recall can filter on.");

const rememberInput = {
  user_message: z
    .string()
    .min(1)
    .optional()
    .describe("What the user said, verbatim. Use with agent_response for one turn."),
  agent_response: z.string().optional().describe("What you answered to user_message."),
  note: z
    .string()
    .min(1)
    .optional()
    .describe("A fact or preference worth keeping, in one or two sentences."),
  metadata,
};

const rememberOutput = { stored: z.boolean(), kind: z.enum(["interaction", "note"]) };

const recallInput = {
  query: z.string().trim().min(1).describe("What to look for, in natural language."),
  limit: z
    .number()
    .int()
    .min(1)
    .max(50)
    .optional()
    .describe("Most results to return (default 10)."),
  filter: z
    .record(z.string(), z.string())
    .optional()
    .describe("Only memories whose metadata has all these label values."),
};

const recallOutput = {
  results: z.array(
    z.looseObject({
      content: z.string(),
      similarity_score: z.number(),
      source_type: z.string(),
      source_id: z.string(),
      timestamp: z.string().optional(),
    }),
  ),
};

const contextInput = {
  query: z.string().trim().min(1).optional().describe("Topic of the current conversation."),
  limit: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe("Most recent events to return (default 10)."),
};

const contextOutput = {
  recent_events: z.array(
    z.object({
      role: z.string(),
      type: z.string(),
      content: z.string(),
      timestamp: z.string().optional(),
    }),
  ),
  relevant_pages: z.array(
    z.object({
      id: z.string(),
      topic: z.string(),
      summary: z.string(),
      timestamp: z.string().optional(),
    }),
  ),
};

const forgetInput = {
  scope: z
    .enum(["agent", "user"])
    .optional()
    .describe(
      "agent: everything the user discussed with this agent; user: everything about the user, with every agent.",
    ),
  event_ids: z
    .array(z.string().trim().min(1))
    .min(1)
    .max(1000)
    .optional()
    .describe("Only these stored events (ids from recall results whose source_type is message)."),
};

const forgetOutput = {
  forgotten: z.boolean(),
  erasure_id: z.string(),
  events_erased: z.number(),
  chains_erased: z.number(),
  chains_rebuilt: z.number(),
  entities_erased: z.number(),
  payloads_erased: z.number(),
};

/**
 * remember, recall, context and forget: the user's memory, always in the scope of the caller's
 * key.
 */
export function registerMemoryTools(server: McpServer): void {
  server.registerTool(
    "remember",
    {
      title: "Remember",
      description:
        "Store something in the user's long-term memory so it can be recalled in later conversations. " +
        "Call it after a meaningful exchange (pass user_message and, if you answered, agent_response) " +
        "or to keep a fact or preference the user stated (pass note). Do not store secrets. " +
        "Returns {stored: true, kind} once the memory service has written it durably.",
      inputSchema: rememberInput,
      outputSchema: rememberOutput,
      annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args, extra) => {
      const { scope, memory, sessions, onError } = contextOf(extra);
      return guarded("remember", onError, async () => {
        if ((args.user_message === undefined) === (args.note === undefined)) {
          throw new McpToolError("remember needs exactly one of user_message or note.");
        }
        if (args.note !== undefined && args.agent_response !== undefined) {
          throw new McpToolError("agent_response goes with user_message, not with note.");
        }
        if (args.note !== undefined) {
          const note = args.note;
          await sessions.withSession(scope, (id) =>
            memory.storeEvent(id, {
              role: "user",
              type: "message",
              content: note,
              metadata: { ...args.metadata, kind: "note" },
            }),
          );
          return toolResult({ stored: true, kind: "note" });
        }
        const userMessage = args.user_message as string;
        await sessions.withSession(scope, (id) =>
          memory.storeInteraction(id, {
            user_message: userMessage,
            agent_response: args.agent_response,
            metadata: args.metadata,
          }),
        );
        return toolResult({ stored: true, kind: "interaction" });
      });
    },
  );

  server.registerTool(
    "recall",
    {
      title: "Recall",
      description:
        "Search the user's long-term memory by meaning and keywords, across everything they discussed " +
        "with any of their agents. Call it before answering when earlier conversations may matter " +
        "(preferences, past decisions, people, projects). Returns {results: [{content, " +
        "similarity_score, source_type, source_id, timestamp}]}, best first; content is a summary " +
        "of a past conversation or a fact. An empty list means nothing relevant is stored. A " +
        "memory is searchable as soon as remember returns.",
      inputSchema: recallInput,
      outputSchema: recallOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) => {
      const { scope, memory, sessions, onError } = contextOf(extra);
      return guarded("recall", onError, async () => {
        const results = await sessions.withSession(scope, (id) =>
          memory.search(id, { query: args.query, limit: args.limit ?? 10, filter: args.filter }),
        );
        return toolResult({ results });
      });
    },
  );

  server.registerTool(
    "context",
    {
      title: "Conversation context",
      description:
        "Get the recent conversation window and the most relevant summarized conversations for the " +
        "user. Call it at the start of a conversation to pick up where the user left off. With " +
        "query, the summaries are chosen by relevance to it; without, the most recent ones. " +
        "Returns {recent_events: [{role, type, content, timestamp}], relevant_pages: [{id, topic, " +
        "summary, timestamp}]}, recent_events oldest first.",
      inputSchema: contextInput,
      outputSchema: contextOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) => {
      const { scope, memory, sessions, onError } = contextOf(extra);
      return guarded("context", onError, async () => {
        const window = await sessions.withSession(scope, (id) =>
          memory.getContext(id, { limit: args.limit, query: args.query }),
        );
        return toolResult({
          recent_events: window.stm_events.map(({ role, type, content, timestamp }) => ({
            role,
            type,
            content,
            timestamp,
          })),
          relevant_pages: window.relevant_pages.map(({ id, topic, summary, timestamp }) => ({
            id,
            topic,
            summary,
            timestamp,
          })),
        });
      });
    },
  );

  server.registerTool(
    "forget",
    {
      title: "Forget",
      description:
        "Erase memories for good, when the user asks you to forget something. Pass scope agent " +
        "(everything the user discussed with you), scope user (everything about the user, with " +
        "every agent), or event_ids (single stored messages, from recall results whose " +
        "source_type is message). Nothing erased can be recalled afterwards, by any agent. " +
        "Confirm with the user before erasing a whole scope. Returns {forgotten: true, " +
        "erasure_id, events_erased, chains_erased, chains_rebuilt, entities_erased, payloads_erased}.",
      inputSchema: forgetInput,
      outputSchema: forgetOutput,
      annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args, extra) => {
      const { scope, memory, sessions, onError } = contextOf(extra);
      return guarded("forget", onError, async () => {
        if ((args.scope === undefined) === (args.event_ids === undefined)) {
          throw new McpToolError("forget needs exactly one of scope or event_ids.");
        }
        const input = args.scope
          ? { scope: args.scope }
          : { event_ids: args.event_ids as string[] };
        const { success, ...counts } = await sessions.withSession(scope, (id) =>
          memory.forget(id, input),
        );
        return toolResult({ forgotten: success, ...counts });
      });
    },
  );
}
