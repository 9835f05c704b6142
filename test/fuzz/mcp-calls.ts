import { deepJson, deepObject, fieldBodies, genericBodies, type Probe } from "./hostile-input.js";

/** The tools' argument fields as the MCP server declares them (kinds as in hostile-input). */
const toolFields: Record<string, { name: string; kind: string }[]> = {
  remember: [
    { name: "user_message", kind: "string" },
    { name: "agent_response", kind: "string" },
    { name: "note", kind: "string" },
    { name: "metadata", kind: "object" },
  ],
  recall: [
    { name: "query", kind: "string" },
    { name: "limit", kind: "number" },
    { name: "filter", kind: "object" },
  ],
  context: [
    { name: "query", kind: "string" },
    { name: "limit", kind: "number" },
  ],
  ask: [
    { name: "message", kind: "string" },
    { name: "system_prompt", kind: "string" },
  ],
  http_request: [
    { name: "connection_id", kind: "string" },
    { name: "method", kind: "string" },
    { name: "url", kind: "string" },
    { name: "headers", kind: "object" },
    { name: "body", kind: "string" },
  ],
};

const rpc = (method: string, params: string) =>
  `{"jsonrpc":"2.0","id":1,"method":${JSON.stringify(method)},"params":${params}}`;

/** JSON-RPC messages that are wrong as JSON-RPC or as MCP, whatever the tool. */
const protocolBodies = [
  rpc("tools/call", '{"name":"\\u0000"}'),
  rpc("tools/call", '{"name":"recall","arguments":"x"}'),
  rpc("tools/call", '{"name":"recall","arguments":[1]}'),
  rpc("tools/call", '"params"'),
  rpc("tools/call", deepObject(300)),
  rpc("no/such/method", "{}"),
  rpc("resources/read", '{"uri":"atrium://traces/%00/x"}'),
  rpc("resources/read", '{"uri":"atrium://traces/../../etc/passwd/x"}'),
  rpc("resources/read", '{"uri":"atrium://traces/mcp_\\u0000/step"}'),
  rpc("resources/read", '{"uri":"\\ud800"}'),
  rpc("resources/read", '{"uri":"file:///etc/passwd"}'),
  rpc("notifications/cancelled", '{"requestId":{"a":1}}'),
  '{"jsonrpc":"2.0","id":{},"method":"tools/list"}',
  '{"jsonrpc":"2.0","id":1,"method":123}',
  '{"jsonrpc":"1.0","id":1,"method":"tools/list"}',
  '{"jsonrpc":"2.0","id":1}',
  `[${Array.from({ length: 200 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"tools/list"}`).join(",")}]`,
  deepJson(300),
];

/** Tool results that mean something broke inside Atrium rather than the input being refused. */
const internalFailure = /failed inside Atrium|Atrium service answered 5\d\d/;

/**
 * Sends hostile JSON-RPC to POST /mcp with a scoped key: every tool argument set to each hostile
 * or wrong value, broken JSON-RPC, hostile resource URIs. A probe fails on a 5xx, a JSON-RPC
 * internal error (-32603), or a tool result that reports an internal failure.
 */
export async function probeMcp(
  url: string,
  key: string,
  onProbe: (probe: Probe) => void,
): Promise<void> {
  const bodies = [
    ...genericBodies,
    ...protocolBodies,
    ...Object.entries(toolFields).flatMap(([tool, fields]) =>
      fieldBodies(fields).map((args) =>
        rpc("tools/call", `{"name":"${tool}","arguments":${args}}`),
      ),
    ),
  ];
  for (const body of bodies) {
    const res = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "x-api-key": key,
      },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    const internal = /"code":-32603/.test(text) || internalFailure.test(text);
    onProbe({
      what: `MCP ${body.slice(0, 80)} → ${text.slice(0, 120)}`,
      status: res.status,
      code: internal ? "internal" : undefined,
    });
  }
}
