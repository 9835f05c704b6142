import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import type { MemoryClient, SearchResult } from "@atrium/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { MemorySessions } from "../memory-sessions.js";
import type { ToolContext } from "../tool-context.js";
import { createMcpHttpHandler } from "./http-handler.js";

/** Searches of one user wait here while `held` names them; the test lets them go. */
const held = new Map<string, () => void>();
const holding = new Set<string>();

/** Memory as the scope sees it: a session is the user's id, a search finds that user's note. */
const sessions: MemorySessions = { withSession: (scope, use) => use(scope.userId) };
const memory = {
  search: async (user: string): Promise<SearchResult[]> => {
    if (holding.has(user)) await new Promise<void>((resolve) => held.set(user, resolve));
    return [
      { content: `note of ${user}`, similarity_score: 1, source_type: "note", source_id: user },
    ];
  },
} as unknown as MemoryClient;

const contextFor = (user: string) =>
  ({
    scope: { tenantId: "t", userId: user, agentId: "a", workspaceId: "w" },
    memory,
    sessions,
    limits: { timeoutMs: 1000, maxResponseBytes: 1024, maxRedirects: 0 },
    recordCall: () => {},
    onError: () => {},
  }) as unknown as Omit<ToolContext, "cancelled">;

let server: Server;
let url: URL;

before(async () => {
  const handler = createMcpHttpHandler();
  server = createServer(async (req, res) => {
    // As on the gateway: stateless, POST only.
    if (req.method !== "POST") return res.writeHead(405, { allow: "POST" }).end();
    let text = "";
    for await (const chunk of req) text += chunk;
    await handler.handle(req, res, JSON.parse(text), {
      callerKey: String(req.headers["x-caller"]),
      context: contextFor(String(req.headers["x-user"])),
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
});

after(() => {
  server.closeAllConnections();
  server.close();
});

/** A client of a key (the caller) whose requests the test server gives the scope of `user`. */
const connect = async (caller: string, user = caller) => {
  const client = new Client({ name: caller, version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { "x-caller": caller, "x-user": user } },
    }),
  );
  return client;
};

const recalled = async (client: Client, signal?: AbortSignal) => {
  const result = await client.callTool(
    { name: "recall", arguments: { query: "notes" } },
    undefined,
    { signal },
  );
  return (result.structuredContent as { results: SearchResult[] }).results.map((r) => r.content);
};

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

test("a server answering a key's requests one after another gives each request its own scope", async () => {
  // One key, the scope differing per request: what a server kept from a request would show.
  const [forAlice, forBob] = [await connect("key-1", "alice"), await connect("key-1", "bob")];
  try {
    for (let i = 0; i < 6; i++) {
      assert.deepEqual(await recalled(forAlice), ["note of alice"]);
      // The request is over once its stream closes; then its server is free for the next one.
      await settle();
      assert.deepEqual(await recalled(forBob), ["note of bob"]);
      await settle();
    }
    const together = await Promise.all(
      Array.from({ length: 10 }, (_, i) => recalled(i % 2 === 0 ? forAlice : forBob)),
    );
    assert.deepEqual(
      together,
      Array.from({ length: 10 }, (_, i) => [`note of ${i % 2 === 0 ? "alice" : "bob"}`]),
    );
  } finally {
    await forAlice.close();
    await forBob.close();
  }
});

test("a call still running after its client left answers no one else", async () => {
  const [alice, bob] = [await connect("alice"), await connect("bob")];
  try {
    holding.add("alice");
    const leaving = new AbortController();
    const abandoned = recalled(alice, leaving.signal);
    while (!held.has("alice")) await settle();
    leaving.abort("alice left");
    await assert.rejects(abandoned, /alice left/);
    await settle();
    // Alice's search ends while bob's request runs.
    holding.delete("alice");
    const bobs = recalled(bob);
    held.get("alice")?.();
    assert.deepEqual(await bobs, ["note of bob"]);
    assert.deepEqual(await recalled(bob), ["note of bob"]);
  } finally {
    holding.clear();
    await alice.close();
    await bob.close();
  }
});
