import { sdkVersion } from "@atrium/sdk";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { registerResources } from "./resources.js";
import type { ToolContext } from "./tool-context.js";
import { registerAskTool } from "./tools/ask.js";
import { registerHttpRequestTool } from "./tools/http-request.js";
import { registerMemoryTools } from "./tools/memory-tools.js";

export type AtriumMcpServerOptions = ToolContext;

const instructions =
  "Atrium gives you the user's long-term memory (context at the start, recall before answering, " +
  "remember after), an agent for delegated tasks (ask), and the user's connected accounts " +
  "(http_request; credentials are added by Atrium). Everything is scoped to the user of this " +
  "connection; there is no way, and no need, to name another user.";

/** One MCP server for one caller's scope. Cheap: built per HTTP request in stateless mode. */
export function createAtriumMcpServer(options: AtriumMcpServerOptions): McpServer {
  const server = new McpServer(
    { name: "atrium", title: "Atrium", version: sdkVersion },
    { capabilities: { tools: {}, resources: {} }, instructions },
  );
  registerMemoryTools(server, options);
  registerAskTool(server, options);
  registerHttpRequestTool(server, options);
  registerResources(server, options);
  return server;
}
