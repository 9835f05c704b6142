import { sdkVersion } from "@atrium/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ListToolsRequestSchema,
  type ListToolsResult,
  RequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { z } from "zod";
import { registerResources } from "./resources.js";
import { TASKS_EXTENSION } from "./tasks/ask-tasks.js";
import type { HttpRequestLimits } from "./tool-context.js";
import { registerAskTool } from "./tools/ask.js";
import { registerHttpRequestTool } from "./tools/http-request.js";
import { registerMemoryTools } from "./tools/memory-tools.js";
import { metaKeys, supportedProtocolVersions } from "./transport/stateless-lifecycle.js";

export interface AtriumMcpServerOptions {
  /** The only setting a server is built with (the tool descriptions state them). */
  limits: HttpRequestLimits;
}

const instructions =
  "Atrium gives you the user's long-term memory (context at the start, recall before answering, " +
  "remember after), an agent for delegated tasks (ask), and the user's connected accounts " +
  "(http_request; credentials are added by Atrium). Everything is scoped to the user of this " +
  "connection; there is no way, and no need, to name another user.";

/**
 * The SDK builds a fresh Ajv (with its formats) for every server it is not given one for; one
 * shared validator keeps a per-request server cheap. Tool schemas are module constants for the
 * same reason.
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

const serverInfo = { name: "atrium", title: "Atrium", version: sdkVersion };

/**
 * What initialize and server/discover declare. The SDK declares listChanged for every kind of
 * list it serves; a stateless endpoint has no stream to send that notification on (GET /mcp is
 * 405, 2026-07-28's subscriptions/listen is not served) and the lists never change while the
 * process runs, so it is declared false. No tool logs: a client may still set a level
 * (2025-11-25 servers answer logging/setLevel), and is sent nothing at any level.
 */
const capabilities = {
  tools: { listChanged: false },
  resources: { listChanged: false },
  logging: {},
};

/**
 * server/discover's capabilities: 2026-07-28 clients also learn of the Tasks extension, which
 * background ask runs through (tasks/ask-tasks.ts); the older revisions' initialize does not
 * declare it, since it is served only to requests of this revision.
 */
const discoveredCapabilities = { ...capabilities, extensions: { [TASKS_EXTENSION]: {} } };

const DiscoverRequestSchema = RequestSchema.extend({ method: z.literal("server/discover") });

function buildServer(options: AtriumMcpServerOptions): McpServer {
  const server = new McpServer(serverInfo, { capabilities, instructions, jsonSchemaValidator });
  registerMemoryTools(server);
  registerAskTool(server);
  registerHttpRequestTool(server, options.limits);
  registerResources(server);
  server.server.registerCapabilities(capabilities);
  // 2026-07-28 has no initialize: this is how its clients learn the same things.
  server.server.setRequestHandler(DiscoverRequestSchema, () => ({
    supportedVersions: supportedProtocolVersions,
    capabilities: discoveredCapabilities,
    instructions,
    _meta: { [metaKeys.serverInfo]: serverInfo },
  }));
  return server;
}

/**
 * tools/list as the SDK answers it, computed once per process and limits (the only thing the
 * list depends on; never the scope). The SDK turns every tool's schemas into JSON Schema on each
 * list, which with a server per request cost about 8 ms per tools/list; the answer is taken from
 * the SDK itself, through its in-memory transport, so it stays exactly what the SDK would send.
 */
const toolLists = new Map<string, Promise<ListToolsResult>>();

function toolListOf(options: AtriumMcpServerOptions): Promise<ListToolsResult> {
  const key = JSON.stringify(options.limits);
  let list = toolLists.get(key);
  if (list === undefined) {
    list = (async () => {
      const server = buildServer(options);
      const client = new Client({ name: "atrium-tool-list", version: sdkVersion });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
      await client.connect(clientSide);
      try {
        return await client.listTools();
      } finally {
        await client.close();
        await server.close();
      }
    })();
    list.catch(() => toolLists.delete(key));
    toolLists.set(key, list);
  }
  return list;
}

/**
 * One MCP server; it holds no caller's data: every handler takes the scope and backends of the
 * request it answers from the request's auth info (see `authInfoFor`), so a server can answer one
 * caller's request after another's.
 */
export function createAtriumMcpServer(options: AtriumMcpServerOptions): McpServer {
  const server = buildServer(options);
  server.server.setRequestHandler(ListToolsRequestSchema, () => toolListOf(options));
  return server;
}
