import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, it } from "node:test";
import { memoryV1 } from "@atrium/api";
import type { FastifyReply, FastifyRequest } from "fastify";
import { createRestHandlerContext } from "./rest-context.js";

function call(headers: Record<string, string | string[]> = {}) {
  const raw = Object.assign(new EventEmitter(), { writableFinished: false });
  const request = {
    method: "GET",
    protocol: "http",
    host: "localhost:8080",
    url: "/api/v1/sessions/s1/context",
    headers,
  } as unknown as FastifyRequest;
  const reply = { raw } as unknown as FastifyReply;
  const rest = createRestHandlerContext({
    service: memoryV1.MemoryService,
    method: memoryV1.MemoryService.method.getContext,
    request,
    reply,
    contextValues: undefined,
  });
  return { ...rest, raw };
}

describe("REST handler context", () => {
  it("aborts a signal first read after the client went away", () => {
    const { context, raw } = call();
    raw.emit("close");
    assert.equal(context.signal.aborted, true);
    assert.match(String(context.signal.reason), /client closed the connection/);
  });

  it("aborts a signal read during the call when the client goes away", () => {
    const { context, raw } = call();
    const { signal } = context;
    assert.equal(signal.aborted, false);
    raw.emit("close");
    assert.equal(signal.aborted, true);
  });

  it("does not count the end of a finished response as the client going away", () => {
    const { context, raw, complete } = call();
    raw.writableFinished = true;
    raw.emit("close");
    complete();
    assert.match(String(context.signal.reason), /call completed/);
  });

  it("stops watching the connection once the call completes", () => {
    const { raw, complete } = call();
    assert.equal(raw.listenerCount("close"), 1);
    complete();
    assert.equal(raw.listenerCount("close"), 0);
  });

  it("reads request headers, repeated ones included, and reports the URL", () => {
    const { context } = call({ "x-tenant": "t1", "x-tag": ["a", "b"] });
    assert.equal(context.requestHeader.get("x-tenant"), "t1");
    assert.equal(context.requestHeader.get("x-tag"), "a, b");
    assert.equal(context.url, "http://localhost:8080/api/v1/sessions/s1/context");
    assert.equal(context.timeoutMs(), undefined);
  });

  it("hands back response headers only when the handler set some", () => {
    const untouched = call();
    assert.equal(untouched.responseHeader(), undefined);
    const touched = call();
    touched.context.responseHeader.set("location", "https://example.test/");
    assert.equal(touched.responseHeader()?.get("location"), "https://example.test/");
  });
});
