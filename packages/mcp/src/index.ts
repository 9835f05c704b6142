export { type AtriumMcpServerOptions, createAtriumMcpServer } from "./create-mcp-server.js";
export {
  createMemorySessions,
  type MemorySessions,
  type MemorySessionsOptions,
} from "./memory-sessions.js";
export {
  type McpScope,
  parseScopeDirectory,
  type ScopeDirectory,
} from "./scope.js";
export type { CredentialedCallRecord, HttpRequestLimits, ToolContext } from "./tool-context.js";
export { McpToolError } from "./tool-result.js";
export {
  createMcpHttpHandler,
  type McpHttpCall,
  type McpHttpHandler,
} from "./transport/http-handler.js";
export {
  type StdioBridge,
  type StdioBridgeOptions,
  startStdioBridge,
} from "./transport/stdio-bridge.js";
