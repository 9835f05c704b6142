import assert from "node:assert/strict";
import { connect as connectHttp2, type IncomingHttpHeaders } from "node:http2";
import { connect as connectTcp } from "node:net";
import { after, before, describe, test } from "node:test";
import { memoryV1 } from "@atrium/api";
import { create, toBinary } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { envelope } from "../rpc/grpc-wire.js";
import { capturedLogger } from "./service-host.fixtures.js";
import { createServiceHost, type ServiceHost } from "./service-host.js";
import { defaultTransportLimits } from "./transport-limits.js";

const { MemoryService, StoreInteractionRequestSchema, GetContextRequestSchema } = memoryV1;
const limits = defaultTransportLimits;

const implementation: Partial<ServiceImpl<typeof MemoryService>> = {
  storeInteraction: () => ({ success: true }),
  getContext: () => ({}),
};

/** How a call ended, in each transport's own terms: an HTTP status, or a gRPC/Connect code. */
interface Outcome {
  status: number | string;
  message: string;
}

/** A request in each transport's form; a transport that cannot express the input has none. */
interface Row {
  what: string;
  rest?: { method: "GET" | "POST"; path: string; body?: string; headers?: Record<string, string> };
  connect?: { method: string; body: string; headers?: Record<string, string> };
  grpc?: { method: string; message: Uint8Array; headers?: Record<string, string> };
  /** REST status, Connect code, gRPC status code: the same limit, as each transport says it. */
  expect: { rest: number; connect: string; grpc: number };
  /** What the refusal must name (the field, or the limit). */
  names?: RegExp;
}

const interactions = "/api/v1/sessions/s1/interactions";
const over = "x".repeat(limits.messageBytes + 1);
const under = "x".repeat(limits.messageBytes - 4096);
const deepJson = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;
/** Unknown field 15 as `levels` nested groups: a binary message nested that deep. */
const nestedGroups = (levels: number) =>
  Uint8Array.from([...Array(levels).fill((15 << 3) | 3), ...Array(levels).fill((15 << 3) | 4)]);
const store = (init: Parameters<typeof create<typeof StoreInteractionRequestSchema>>[1]) =>
  toBinary(StoreInteractionRequestSchema, create(StoreInteractionRequestSchema, init));
const concat = (a: Uint8Array, b: Uint8Array) => Uint8Array.from([...a, ...b]);
const bigHeader = { "x-padding": "p".repeat(limits.headerBytes) };
/**
 * About 14 KB as HTTP/1 bytes, about 17 KB as HTTP/2 counts them (32 more per field); fewer
 * fields than Node's HTTP/2 cap on their number (128).
 */
const manyHeaders = Object.fromEntries(
  Array.from({ length: 100 }, (_, i) => [`x-h-${i}`, "v".repeat(130)]),
);
/** 300 fields, about 12 KB as HTTP/2 counts them: within the byte limit, over Node's HTTP/2 default cap on their number (128). */
const manySmallHeaders = Object.fromEntries(
  Array.from({ length: 300 }, (_, i) => [`x-h-${i}`, "v"]),
);

const rows: Row[] = [
  {
    what: "a message just under the size limit is served",
    rest: { method: "POST", path: interactions, body: JSON.stringify({ user_message: under }) },
    connect: { method: "StoreInteraction", body: JSON.stringify({ userMessage: under }) },
    grpc: { method: "StoreInteraction", message: store({ sessionId: "s1", userMessage: under }) },
    expect: { rest: 200, connect: "ok", grpc: 0 },
  },
  {
    what: "a message over the size limit is refused",
    rest: { method: "POST", path: interactions, body: JSON.stringify({ user_message: over }) },
    connect: { method: "StoreInteraction", body: JSON.stringify({ userMessage: over }) },
    grpc: { method: "StoreInteraction", message: store({ sessionId: "s1", userMessage: over }) },
    expect: { rest: 413, connect: "resource_exhausted", grpc: 8 },
  },
  {
    what: `nesting of ${limits.nestingDepth} levels, in a field no one knows, is served`,
    rest: { method: "POST", path: interactions, body: `{"x":${deepJson(limits.nestingDepth)}}` },
    connect: { method: "StoreInteraction", body: `{"x":${deepJson(limits.nestingDepth)}}` },
    grpc: { method: "StoreInteraction", message: nestedGroups(limits.nestingDepth) },
    // REST refuses unknown fields outright; Connect and gRPC keep or ignore them.
    expect: { rest: 400, connect: "ok", grpc: 0 },
    names: /unknown field "x"/,
  },
  {
    what: `nesting of ${limits.nestingDepth + 1} levels is refused, known field or not`,
    rest: {
      method: "POST",
      path: interactions,
      body: `{"x":${deepJson(limits.nestingDepth + 1)}}`,
    },
    connect: { method: "StoreInteraction", body: `{"x":${deepJson(10_000)}}` },
    grpc: { method: "StoreInteraction", message: nestedGroups(limits.nestingDepth + 1) },
    expect: { rest: 400, connect: "invalid_argument", grpc: 3 },
    names: /nested more than 64 levels/,
  },
  {
    what: "a timestamp after 9999-12-31 is refused naming the field",
    rest: {
      method: "POST",
      path: interactions,
      body: JSON.stringify({ timestamp: "10000-01-01T00:00:00Z" }),
    },
    connect: {
      method: "StoreInteraction",
      body: JSON.stringify({ timestamp: "10000-01-01T00:00:00Z" }),
    },
    grpc: { method: "StoreInteraction", message: store({ timestamp: { seconds: 2n ** 62n } }) },
    expect: { rest: 400, connect: "invalid_argument", grpc: 3 },
    names: /timestamp/,
  },
  {
    what: "a timestamp before 0001-01-01 or with negative nanos is refused naming the field",
    rest: {
      method: "POST",
      path: interactions,
      body: JSON.stringify({ timestamp: "0000-12-31T23:59:59Z" }),
    },
    connect: {
      method: "StoreInteraction",
      body: JSON.stringify({ timestamp: "0000-12-31T23:59:59Z" }),
    },
    grpc: { method: "StoreInteraction", message: store({ timestamp: { seconds: 1n, nanos: -1 } }) },
    expect: { rest: 400, connect: "invalid_argument", grpc: 3 },
    names: /timestamp/,
  },
  {
    what: "a day that does not exist is refused naming the field",
    rest: {
      method: "POST",
      path: interactions,
      body: JSON.stringify({ timestamp: "2026-02-30T00:00:00Z" }),
    },
    connect: {
      method: "StoreInteraction",
      body: JSON.stringify({ timestamp: "2026-02-30T00:00:00Z" }),
    },
    grpc: {
      method: "StoreInteraction",
      message: store({ timestamp: { seconds: 1_000_000_000n, nanos: 1_000_000_000 } }),
    },
    expect: { rest: 400, connect: "invalid_argument", grpc: 3 },
    names: /timestamp/,
  },
  {
    what: "a number that is not decimal text is refused naming the field",
    rest: { method: "GET", path: "/api/v1/sessions/s1/context?limit=0x10" },
    connect: { method: "GetContext", body: JSON.stringify({ sessionId: "s1", limit: "0x10" }) },
    grpc: {
      method: "GetContext",
      message: concat(toBinary(GetContextRequestSchema, create(GetContextRequestSchema)), [
        0x10, 0x80,
      ] as unknown as Uint8Array),
    },
    // The binary form has no text: a truncated varint is what a malformed number is there.
    expect: { rest: 400, connect: "invalid_argument", grpc: 3 },
    names: /limit|GetContextRequest/,
  },
  {
    what: "headers over the size limit are refused",
    rest: { method: "POST", path: interactions, body: "{}", headers: bigHeader },
    connect: { method: "StoreInteraction", body: "{}", headers: bigHeader },
    grpc: { method: "StoreInteraction", message: store({}), headers: bigHeader },
    expect: { rest: 431, connect: "resource_exhausted", grpc: 8 },
  },
  {
    what: "headers over the size limit as HTTP/2 counts them are refused on REST too",
    rest: { method: "POST", path: interactions, body: "{}", headers: manyHeaders },
    connect: { method: "StoreInteraction", body: "{}", headers: manyHeaders },
    grpc: { method: "StoreInteraction", message: store({}), headers: manyHeaders },
    expect: { rest: 431, connect: "resource_exhausted", grpc: 8 },
    names: /request headers are larger than 16384 bytes/,
  },
  {
    what: "many small header fields within the size limit are served",
    rest: { method: "POST", path: interactions, body: "{}", headers: manySmallHeaders },
    connect: { method: "StoreInteraction", body: "{}", headers: manySmallHeaders },
    grpc: { method: "StoreInteraction", message: store({}), headers: manySmallHeaders },
    expect: { rest: 200, connect: "ok", grpc: 0 },
  },
];

async function restCall(baseUrl: string, request: NonNullable<Row["rest"]>): Promise<Outcome> {
  const response = await fetch(`${baseUrl}${request.path}`, {
    method: request.method,
    headers: {
      ...(request.body ? { "content-type": "application/json" } : {}),
      ...request.headers,
    },
    body: request.body,
  });
  const text = await response.text();
  const body = text.startsWith("{") ? (JSON.parse(text) as { message?: string }) : undefined;
  return { status: response.status, message: body?.message ?? text };
}

interface H2Answer {
  headers: IncomingHttpHeaders;
  trailers: IncomingHttpHeaders;
  body: string;
}

function h2Call(baseUrl: string, headers: Record<string, string>, body: Uint8Array) {
  return new Promise<H2Answer>((resolve, reject) => {
    const session = connectHttp2(baseUrl);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ...headers });
    const answer: H2Answer = { headers: {}, trailers: {}, body: "" };
    stream.on("response", (h) => {
      answer.headers = h;
    });
    stream.on("trailers", (t) => {
      answer.trailers = t;
    });
    stream.setEncoding("latin1");
    stream.on("data", (chunk: string) => {
      answer.body += chunk;
    });
    stream.on("close", () => {
      session.close();
      resolve(answer);
    });
    stream.on("error", () => {});
    stream.end(body);
  });
}

async function connectCall(baseUrl: string, request: NonNullable<Row["connect"]>) {
  const answer = await h2Call(
    baseUrl,
    {
      ":path": `/memory.v1.MemoryService/${request.method}`,
      "content-type": "application/json",
      "connect-protocol-version": "1",
      ...request.headers,
    },
    Buffer.from(request.body),
  );
  if (Number(answer.headers[":status"]) === 200) return { status: "ok", message: answer.body };
  const error = JSON.parse(answer.body) as { code: string; message: string };
  return { status: error.code, message: error.message };
}

async function grpcCall(baseUrl: string, request: NonNullable<Row["grpc"]>): Promise<Outcome> {
  const answer = await h2Call(
    baseUrl,
    {
      ":path": `/memory.v1.MemoryService/${request.method}`,
      "content-type": "application/grpc",
      te: "trailers",
      ...request.headers,
    },
    envelope(request.message),
  );
  const status = answer.trailers["grpc-status"] ?? answer.headers["grpc-status"];
  const message = answer.trailers["grpc-message"] ?? answer.headers["grpc-message"] ?? "";
  return { status: Number(status), message: decodeURIComponent(String(message)) };
}

describe("the same limits on every transport", () => {
  let host: ServiceHost;
  let restUrl: string;
  let grpcUrl: string;
  before(async () => {
    host = createServiceHost({
      name: "memory",
      logger: capturedLogger().logger,
      rest: { host: "127.0.0.1", port: 0 },
      grpc: { host: "127.0.0.1", port: 0 },
      services: [{ service: MemoryService, implementation }],
      limits: { bodyReadTimeoutMs: 1000 },
    });
    ({ restUrl, grpcUrl } = (await host.start()) as { restUrl: string; grpcUrl: string });
  });
  after(() => host.stop());

  for (const row of rows) {
    test(row.what, async () => {
      const outcomes = {
        rest: row.rest && (await restCall(restUrl, row.rest)),
        connect: row.connect && (await connectCall(grpcUrl, row.connect)),
        grpc: row.grpc && (await grpcCall(grpcUrl, row.grpc)),
      };
      for (const transport of ["rest", "connect", "grpc"] as const) {
        const outcome = outcomes[transport];
        assert.ok(outcome, `${transport} has a form of this input`);
        assert.equal(outcome.status, row.expect[transport], `${transport}: ${outcome.message}`);
        const refused = outcome.status !== 200 && outcome.status !== "ok" && outcome.status !== 0;
        if (refused && row.names) assert.match(outcome.message, row.names, transport);
      }
    });
  }

  test("a refused message leaves its HTTP/2 session serving the next calls", async () => {
    const session = connectHttp2(grpcUrl);
    const call = (body: string) =>
      new Promise<number>((resolve) => {
        const stream = session.request({
          ":method": "POST",
          ":path": "/memory.v1.MemoryService/StoreInteraction",
          "content-type": "application/json",
          "connect-protocol-version": "1",
        });
        let status = 0;
        stream.on("response", (h) => {
          status = Number(h[":status"]);
        });
        stream.on("data", () => {});
        stream.on("error", () => {});
        stream.on("close", () => resolve(status));
        stream.end(body);
      });
    try {
      const started = Date.now();
      assert.equal(
        await call(JSON.stringify({ userMessage: "x".repeat(4 * limits.messageBytes) })),
        429,
      );
      assert.equal(await call("{}"), 200);
      assert.equal(await call("{}"), 200);
      assert.ok(Date.now() - started < 5000, "answered without waiting for a timeout");
    } finally {
      session.close();
    }
  });

  /** Sends the headers and 10 of the 1,000 bytes it declares, then nothing. */
  function slowRest(): Promise<string> {
    return new Promise((resolve, reject) => {
      const { hostname, port } = new URL(restUrl);
      const socket = connectTcp(Number(port), hostname, () => {
        socket.write(
          `POST ${interactions} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"user_me`,
        );
      });
      let text = "";
      socket.setEncoding("latin1");
      socket.on("data", (chunk: string) => {
        text += chunk;
      });
      socket.on("close", () => resolve(text.split("\r\n")[0]));
      socket.on("error", reject);
    });
  }

  function slowH2(headers: Record<string, string>): Promise<H2Answer> {
    return new Promise((resolve, reject) => {
      const session = connectHttp2(grpcUrl);
      session.on("error", reject);
      const stream = session.request({
        ":method": "POST",
        ":path": "/memory.v1.MemoryService/StoreInteraction",
        ...headers,
      });
      const answer: H2Answer = { headers: {}, trailers: {}, body: "" };
      stream.on("response", (h) => {
        answer.headers = h;
      });
      stream.setEncoding("latin1");
      stream.on("data", (chunk: string) => {
        answer.body += chunk;
      });
      stream.on("close", () => {
        session.close();
        resolve(answer);
      });
      stream.on("error", () => {});
      stream.write(Buffer.from([0, 0, 0, 3, 0xe8, 0x0a]));
    });
  }

  test("a body sent too slowly is cut after the stated time on every transport", async () => {
    const started = Date.now();
    const [rest, connect, grpc] = await Promise.all([
      slowRest(),
      slowH2({ "content-type": "application/json", "connect-protocol-version": "1" }),
      slowH2({ "content-type": "application/grpc", te: "trailers" }),
    ]);
    const elapsed = Date.now() - started;
    assert.equal(rest, "HTTP/1.1 408 Request Timeout");
    assert.equal(Number(connect.headers[":status"]), 408);
    assert.equal(JSON.parse(connect.body).code, "deadline_exceeded");
    assert.equal(grpc.headers["grpc-status"], "4");
    // Node checks REST connections once a second, so the cut lands within two.
    assert.ok(elapsed < 4000, `cut after ${elapsed} ms`);
  });
});
