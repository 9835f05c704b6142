import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { memoryV1 } from "@atrium/api";
import type { DescMethod } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createContextValues, type HandlerContext } from "@connectrpc/connect";
import Fastify, { type FastifyInstance } from "fastify";
import { identityKey } from "../auth/identity.js";
import { notFound } from "../errors.js";
import { freezeResult } from "./frozen-result.js";
import { feedService, libraryService } from "./testdata/library-service.js";
import { registerRestRoutes } from "./transcoder.js";

/** Records what each handler received, so tests assert on the decoded request message. */
const received: { request?: unknown; context?: HandlerContext } = {};
function record(request: unknown, context: HandlerContext) {
  received.request = request;
  received.context = context;
}

describe("registerRestRoutes with the memory service", () => {
  const app: FastifyInstance = Fastify();
  const calls: DescMethod[] = [];

  before(async () => {
    registerRestRoutes(
      app,
      memoryV1.MemoryService,
      {
        getContext(request, context) {
          record(request, context);
          return { ltpm: { status: "not_implemented" } };
        },
        storeEvent(request, context) {
          record(request, context);
          return { success: true, eventId: "e1" };
        },
        createSession(request, context) {
          record(request, context);
          return {
            sessionId: "s1",
            createdAt: timestampFromDate(new Date("2024-05-06T07:08:09Z")),
          };
        },
        analyzeTopics(request) {
          throw notFound(`session ${request.sessionId} not found`);
        },
        getHeatMetrics() {
          throw new Error("connection string postgres://user:secret@db leaked");
        },
      },
      {
        contextValues: (request) =>
          createContextValues().set(identityKey, {
            tenantId: String(request.headers["x-tenant"] ?? ""),
            userId: "u1",
          }),
        onCall: (method) => calls.push(method),
      },
    );
    await app.ready();
  });
  after(() => app.close());

  it("binds path and query parameters, respecting optional presence", async () => {
    const res = await app.inject({ url: "/api/v1/sessions/abc/context?limit=5&query=x" });
    assert.equal(res.statusCode, 200);
    const request = received.request as memoryV1.GetContextRequest;
    assert.equal(request.sessionId, "abc");
    assert.equal(request.limit, 5);
    assert.equal(request.query, "x");

    await app.inject({ url: "/api/v1/sessions/abc/context" });
    assert.equal((received.request as memoryV1.GetContextRequest).limit, undefined);
  });

  it("answers proto3 JSON with proto field names and implicit defaults", async () => {
    const res = await app.inject({ url: "/api/v1/sessions/abc/context" });
    assert.match(String(res.headers["content-type"]), /^application\/json/);
    assert.deepEqual(res.json(), {
      stm_events: [],
      relevant_pages: [],
      segments: [],
      ltpm: { status: "not_implemented", message: "" },
    });
  });

  it("decodes a body: base64 bytes, RFC 3339 timestamps, snake_case names", async () => {
    const res = await app.inject({
      method: "POST",
      url: "/api/v1/sessions/s9/events",
      payload: {
        role: "user",
        content: "hi",
        payload: Buffer.from("hello").toString("base64"),
        mime_type: "text/plain",
        timestamp: "2024-01-02T03:04:05Z",
      },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { success: true, event_id: "e1" });
    const request = received.request as memoryV1.StoreEventRequest;
    assert.equal(request.sessionId, "s9");
    assert.equal(Buffer.from(request.payload).toString(), "hello");
    assert.equal(request.mimeType, "text/plain");
    assert.equal(request.timestamp?.seconds, BigInt(Date.UTC(2024, 0, 2, 3, 4, 5) / 1000));
  });

  it("writes timestamps as RFC 3339", async () => {
    const res = await app.inject({ method: "POST", url: "/api/v1/sessions", payload: {} });
    assert.deepEqual(res.json(), { session_id: "s1", created_at: "2024-05-06T07:08:09Z" });
  });

  it("gives handlers a real HandlerContext", async () => {
    await app.inject({ url: "/api/v1/sessions/abc/context", headers: { "x-tenant": "t1" } });
    const context = received.context!;
    assert.equal(context.service, memoryV1.MemoryService);
    assert.equal(context.method, memoryV1.MemoryService.method.getContext);
    assert.equal(context.requestMethod, "GET");
    assert.equal(context.requestHeader.get("x-tenant"), "t1");
    assert.deepEqual(context.values.get(identityKey), { tenantId: "t1", userId: "u1" });
    assert.equal(context.signal.aborted, true, "the signal fires once the call completes");
    assert.equal(calls.at(-1), memoryV1.MemoryService.method.getContext);
  });

  it("rejects an unknown body field, naming it", async () => {
    const res = await app.inject({
      method: "POST",
      url: "/api/v1/sessions/s9/events",
      payload: { content: "x", bogus: 1 },
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { code: "InvalidArgument", message: 'unknown field "bogus"' });
  });

  it("rejects a wrongly typed field, naming it", async () => {
    for (const [payload, name] of [
      [{ content: 5 }, "content"],
      [{ timestamp: "yesterday" }, "timestamp"],
      [{ payload: "not base64!" }, "payload"],
      [{ metadata: { a: 1 } }, "metadata"],
    ] as const) {
      const res = await app.inject({ method: "POST", url: "/api/v1/sessions/s9/events", payload });
      assert.equal(res.statusCode, 400, name);
      const body = res.json();
      assert.equal(body.code, "InvalidArgument");
      assert.match(body.message, new RegExp(`^invalid value for field "${name}": `));
    }
    const res = await app.inject({ url: "/api/v1/sessions/abc/context?limit=many" });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().message, /field "limit"/);
  });

  it("rejects malformed JSON and non-JSON bodies", async () => {
    const malformed = await app.inject({
      method: "POST",
      url: "/api/v1/sessions/s9/events",
      headers: { "content-type": "application/json" },
      payload: '{"content": ',
    });
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json().code, "InvalidArgument");

    const array = await app.inject({ method: "POST", url: "/api/v1/sessions", payload: [1] });
    assert.equal(array.statusCode, 400);
    assert.equal(array.json().message, "request body must be a JSON object");

    const text = await app.inject({
      method: "POST",
      url: "/api/v1/sessions",
      headers: { "content-type": "text/plain" },
      payload: "hello",
    });
    assert.equal(text.statusCode, 415);
    assert.equal(text.json().code, "InvalidArgument");
  });

  it("rejects unknown query parameters and ones the path already binds", async () => {
    const unknown = await app.inject({ url: "/api/v1/sessions/abc/context?limt=5" });
    assert.equal(unknown.statusCode, 400);
    assert.equal(unknown.json().message, 'unknown query parameter "limt"');

    const bound = await app.inject({ url: "/api/v1/sessions/abc/context?session_id=other" });
    assert.equal(bound.statusCode, 400);
    assert.match(bound.json().message, /bound by the path/);

    const twice = await app.inject({ url: "/api/v1/sessions/abc/context?limit=1&limit=2" });
    assert.equal(twice.statusCode, 400);
    assert.equal(twice.json().message, 'query parameter "limit" given more than once');
  });

  it("answers 501 for a method the implementation lacks", async () => {
    const res = await app.inject({ url: "/api/v1/sessions/abc" });
    assert.equal(res.statusCode, 501);
    assert.deepEqual(res.json(), {
      code: "Unimplemented",
      message: "memory.v1.MemoryService.GetSession is not implemented",
    });
  });

  it("maps an AtriumError to its status and body", async () => {
    const res = await app.inject({ url: "/api/v1/sessions/abc/analysis/topics" });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { code: "NotFound", message: "session abc not found" });
  });

  it("hides a plain Error behind 500 internal error", async () => {
    const res = await app.inject({ url: "/api/v1/sessions/abc/analysis/heat" });
    assert.equal(res.statusCode, 500);
    assert.deepEqual(res.json(), { code: "Internal", message: "internal error" });
    assert.doesNotMatch(res.body, /secret|stack|at /);
  });
});

describe("registerRestRoutes with nested paths, enums, repeated fields and field bodies", () => {
  const app: FastifyInstance = Fastify();

  before(async () => {
    registerRestRoutes(app, libraryService, {
      listBooks: (request: unknown, context: HandlerContext) => {
        record(request, context);
        return {};
      },
      createBook: (request: { book?: object }, context: HandlerContext) => {
        record(request, context);
        return request.book ?? {};
      },
      getBook: (request: { id: string }) => ({ title: `title of ${request.id}` }),
    } as never);
    await app.ready();
  });
  after(() => app.close());

  it("binds nested path variables and typed, repeated query parameters", async () => {
    const res = await app.inject({
      url:
        "/v1/shelves/s1/books?genres=GENRE_FICTION&genres=2&tags=a&tags=b&page_size=3" +
        "&include_drafts=true&since=2024-01-01T00:00:00Z&shelf.theme=space",
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { books: [] });
    const request = received.request as Record<string, unknown>;
    assert.deepEqual(request.shelf, { $typeName: "fixture.v1.Shelf", id: "s1", theme: "space" });
    assert.deepEqual(request.genres, [1, 2]);
    assert.deepEqual(request.tags, ["a", "b"]);
    assert.equal(request.pageSize, 3);
    assert.equal(request.includeDrafts, true);
    assert.equal((request.since as { seconds: bigint }).seconds, 1704067200n);
  });

  it("rejects query values of the wrong type and fields a query cannot set", async () => {
    for (const [query, expected] of [
      ["genres=POETRY", /field "genres"/],
      ["include_drafts=yes", /field "include_drafts"/],
      ["labels=x", /field "labels" cannot be set from a query/],
      ["shelf.id=s2", /bound by the path/],
    ] as const) {
      const res = await app.inject({ url: `/v1/shelves/s1/books?${query}` });
      assert.equal(res.statusCode, 400, query);
      assert.match(res.json().message, expected);
    }
  });

  it('binds body: "<field>" and answers with int64 as string and enums by name', async () => {
    const res = await app.inject({
      method: "POST",
      url: "/v1/shelves/s1/books",
      payload: { title: "Dune", pages: "412", genre: "GENRE_FICTION" },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      title: "Dune",
      genre: "GENRE_FICTION",
      tags: [],
      pages: "412",
      cover: "",
    });
    const request = received.request as { shelf: { id: string } };
    assert.equal(request.shelf.id, "s1");
  });

  it("serves additional bindings and names nested fields in errors", async () => {
    const ok = await app.inject({
      method: "POST",
      url: "/v1/books:create",
      payload: { shelf: { id: "s2" }, book: { title: "Solaris" } },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().title, "Solaris");

    const bad = await app.inject({
      method: "POST",
      url: "/v1/books:create",
      payload: { book: { titel: "Solaris" } },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().message, 'unknown field "book.titel"');

    const badList = await app.inject({
      method: "POST",
      url: "/v1/books:create",
      payload: { book: { tags: ["a", 7] } },
    });
    assert.equal(badList.statusCode, 400);
    assert.match(badList.json().message, /^invalid value for field "book.tags": /);
  });

  it("answers with the response_body field alone", async () => {
    const res = await app.inject({ url: "/v1/books/b1" });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json(), "title of b1");
  });

  it("refuses to register an annotated streaming method", async () => {
    const other = Fastify();
    try {
      assert.throws(
        () => registerRestRoutes(other, feedService, {}),
        /fixture\.v1\.Feed\.WatchBook: server_streaming methods have no REST mapping/,
      );
    } finally {
      await other.close();
    }
  });
});

describe("registerRestRoutes with results that repeat", () => {
  const app: FastifyInstance = Fastify();
  let next: unknown;

  before(async () => {
    registerRestRoutes(app, memoryV1.MemoryService, { getContext: () => next as never });
    await app.ready();
  });
  after(() => app.close());

  const statusOf = async () =>
    (await app.inject({ url: "/api/v1/sessions/s1/context" })).json().ltpm.status;

  it("writes a frozen result once and each new one afresh", async () => {
    const first = freezeResult({ ltpm: { status: "one" } });
    next = first;
    assert.equal(await statusOf(), "one");
    assert.equal(await statusOf(), "one");
    assert.throws(() => {
      (first.ltpm as { status: string }).status = "changed";
    }, "frozen all the way down");
    next = freezeResult({ ltpm: { status: "two" } });
    assert.equal(await statusOf(), "two");
    next = first;
    assert.equal(await statusOf(), "one");
  });

  it("writes a result that is not frozen every time, so that changes to it show", async () => {
    const result = { ltpm: { status: "before" } };
    next = result;
    assert.equal(await statusOf(), "before");
    result.ltpm.status = "after";
    assert.equal(await statusOf(), "after");
  });
});
