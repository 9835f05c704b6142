import { createServer, type Http2Server, type ServerHttp2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import { memoryV1 } from "@atrium/api";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";

export interface FakeMemory {
  url: string;
  sessions: { tenantId: string; userId: string; agentId: string }[];
  stored: {
    sessionId: string;
    userMessage: string;
    agentResponse: string;
    agentResponseSource: string;
  }[];
  apiKeys: (string | null)[];
  close(): Promise<void>;
}

/** A memory service stand-in speaking real gRPC (Connect's Node adapter over HTTP/2). */
export async function startFakeMemory(notes: string[]): Promise<FakeMemory> {
  const fake: Omit<FakeMemory, "url" | "close"> = { sessions: [], stored: [], apiKeys: [] };
  const handler = connectNodeAdapter({
    routes(router) {
      router.service(memoryV1.MemoryService, {
        async createSession(req, ctx) {
          fake.apiKeys.push(ctx.requestHeader.get("x-api-key"));
          fake.sessions.push({ tenantId: req.tenantId, userId: req.userId, agentId: req.agentId });
          return { sessionId: `s${fake.sessions.length}` };
        },
        async getContext(req) {
          if (!req.sessionId.startsWith("s")) throw new ConnectError("no session", Code.NotFound);
          return {
            stmEvents: [{ role: "user", type: "message", content: "earlier question" }],
            relevantPages: [],
          };
        },
        async searchMemory(req) {
          const words = req.query
            .toLowerCase()
            .split(/\W+/)
            .filter((w) => w.length > 3);
          return {
            results: notes
              .filter((n) => words.some((w) => n.toLowerCase().includes(w)))
              .map((content, i) => ({
                content,
                similarityScore: 0.9 - i * 0.1,
                sourceType: "chain",
                sourceId: `c${i}`,
              })),
          };
        },
        async healthCheck() {
          return { status: "SERVING" };
        },
        async storeInteraction(req) {
          fake.stored.push({
            sessionId: req.sessionId,
            userMessage: req.userMessage,
            agentResponse: req.agentResponse,
            agentResponseSource: req.agentResponseSource,
          });
          return { success: true, interactionId: "" };
        },
      });
    },
  });
  const server: Http2Server = createServer(handler);
  const sessions = new Set<ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...fake,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}
