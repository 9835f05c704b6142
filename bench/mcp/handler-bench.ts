// The MCP handling alone: one `recall` through createMcpHttpHandler (the SDK's transport and
// server, the tool, the answer) with memory answering at once and no network, so the CPU the
// gateway spends per tool call on MCP itself shows apart from HTTP, the hop and the backend.
// Runs the compiled packages, as the gateway does.
//
//   node --import tsx bench/mcp/handler-bench.ts        (no services needed)
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createMcpHttpHandler, type ToolContext } from "@atrium/mcp";

const results = Array.from({ length: 5 }, (_, i) => ({
  content: "I picked the leather hiking boots with ankle support for the Alps trip. ".repeat(2),
  similarity_score: 0.5 + i / 10,
  source_type: "dialogue_page",
  source_id: `p${i}`,
  timestamp: new Date().toISOString(),
}));
const context = {
  scope: { tenantId: "t", userId: "u", agentId: "a", workspaceId: "w" },
  memory: { search: async () => JSON.parse(JSON.stringify(results)) },
  sessions: { withSession: (_scope: unknown, use: (id: string) => unknown) => use("s") },
  limits: { timeoutMs: 1000, maxResponseBytes: 1024, maxRedirects: 0 },
  recordCall: () => {},
  onError: (e: unknown) => console.error(e),
} as unknown as Omit<ToolContext, "cancelled">;
const headers = {
  host: "127.0.0.1:1234",
  connection: "keep-alive",
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "x-api-key": "k".repeat(40),
  "mcp-protocol-version": "2025-06-18",
  "user-agent": "node",
  "content-length": "120",
};
const handler = createMcpHttpHandler();
let id = 0;
async function once() {
  const req = {
    method: "POST",
    url: "/mcp",
    headers,
    rawHeaders: Object.entries(headers).flat(),
  } as unknown as IncomingMessage;
  const res = new EventEmitter() as EventEmitter & Record<string, unknown>;
  let body = "";
  Object.assign(res, {
    writableFinished: false,
    writeHead: () => res,
    flushHeaders: () => {},
    end: (chunk: Buffer) => {
      body = String(chunk);
      res.writableFinished = true;
      setImmediate(() => res.emit("close"));
    },
  });
  id += 1;
  const message = {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "recall", arguments: { query: "boots", limit: 5 } },
  };
  await handler.handle(req, res as unknown as ServerResponse, message, { callerKey: "c", context });
  if (!body.includes("hiking")) throw new Error(body);
  // The request ends when its response closes; the gateway's next request comes after that.
  await new Promise((resolve) => setTimeout(resolve, 0));
}
for (let i = 0; i < 2000; i++) await once();
const n = 5000;
let cpu = process.cpuUsage();
for (let i = 0; i < n; i++) await once();
cpu = process.cpuUsage(cpu);
console.log(`handler: ${((cpu.user + cpu.system) / n).toFixed(0)} us CPU per recall`);
