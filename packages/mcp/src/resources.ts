import { AtriumHttpError } from "@atrium/sdk";
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { contextOf, type ToolContext } from "./tool-context.js";
import { McpToolError } from "./tool-result.js";
import { workflowPrefix } from "./tools/ask.js";

/** The MCP specification's code for a resource that does not exist (or is not the caller's). */
const resourceNotFound = -32002;

/**
 * Resource reads answer JSON-RPC errors, not tool results: a refusal or a missing resource is the
 * caller's (-32002, -32602), anything else is internal and logged.
 */
async function readGuarded<T>(context: ToolContext, uri: URL, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (
      error instanceof McpToolError ||
      (error instanceof AtriumHttpError && error.status === 404)
    ) {
      throw new McpError(resourceNotFound, error.message, { uri: uri.href });
    }
    if (error instanceof AtriumHttpError && error.status < 500) {
      throw new McpError(ErrorCode.InvalidParams, error.message, { uri: uri.href });
    }
    context.onError(error, `resource ${uri.protocol}//${uri.host}`);
    throw error;
  }
}

const json = (uri: URL, value: unknown) => ({
  contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(value) }],
});

const one = (value: string | string[]) => (Array.isArray(value) ? value[0] : value);

/**
 * Resources: the user's recent dialogue pages (summarized conversations) and the trace history of
 * a step that ask ran for this scope.
 */
export function registerResources(server: McpServer): void {
  server.registerResource(
    "recent-dialogue-pages",
    "atrium://memory/dialogue-pages",
    {
      title: "Recent conversations",
      description:
        "The user's most recent summarized conversations (dialogue pages): id, topic, summary, timestamp.",
      mimeType: "application/json",
    },
    (uri, extra) => {
      const context = contextOf(extra);
      return readGuarded(context, uri, async () => {
        const window = await context.sessions.withSession(context.scope, (id) =>
          context.memory.getContext(id, { limit: 1 }),
        );
        return json(uri, {
          pages: window.relevant_pages.map(({ id, topic, summary, timestamp }) => ({
            id,
            topic,
            summary,
            timestamp,
          })),
        });
      });
    },
  );

  server.registerResource(
    "trace-history",
    new ResourceTemplate("atrium://traces/{workflow_id}/{step_id}", { list: undefined }),
    {
      title: "Agent step trace",
      description:
        "Every trace event (thinking, tool calls, LLM calls, step_complete) of one step that ask ran; ask returns this URI.",
      mimeType: "application/json",
    },
    (uri, variables, extra) => {
      const context = contextOf(extra);
      return readGuarded(context, uri, async () => {
        const workflowId = one(variables.workflow_id);
        const stepId = one(variables.step_id);
        // Only workflows this scope started: trace ids are not secrets, scopes are.
        if (!workflowId.startsWith(workflowPrefix(context))) {
          throw new McpToolError(`No trace of workflow ${workflowId} for this key.`);
        }
        return json(uri, { events: await context.chat.history(workflowId, stepId) });
      });
    },
  );
}
