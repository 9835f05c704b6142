import assert from "node:assert/strict";
import { connect } from "node:http2";
import { after, before, describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import { memoryV1 } from "@atrium/api";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { malformedProtobuf } from "./fuzz/hostile-input.js";
import { startTestService, type TestService } from "./memory-service-harness.js";

/**
 * Bytes that are no request message are the caller's error on every protocol memory's gRPC port
 * speaks (issue 28): binary gRPC took its own path and answered INVALID_ARGUMENT, but through
 * Connect's router (Connect binary, gRPC-Web, compressed gRPC) the same bytes were INTERNAL.
 */
let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(() => svc?.stop());

const path = (method: string) => `/memory.v1.MemoryService/${method}`;

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  trailers: Record<string, unknown>;
  body: Buffer;
}

function call(headers: Record<string, string>, body: Uint8Array): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = connect(svc.service.urls.grpc ?? "");
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ...headers });
    const answer: Answer = { status: 0, headers: {}, trailers: {}, body: Buffer.alloc(0) };
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      answer.status = Number(h[":status"]);
      answer.headers = h;
    });
    stream.on("trailers", (t) => {
      answer.trailers = t;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", reject);
    stream.on("close", () => {
      session.close();
      answer.body = Buffer.concat(chunks);
      resolve(answer);
    });
    stream.end(body);
  });
}

const frame = (flags: number, data: Uint8Array) => {
  const out = Buffer.alloc(5 + data.byteLength);
  out[0] = flags;
  out.writeUInt32BE(data.byteLength, 1);
  out.set(data, 5);
  return out;
};

/** The frames of a gRPC-Web body: messages, then the trailer frame (flag 0x80) as headers. */
function grpcWebFrames(body: Buffer) {
  const messages: Buffer[] = [];
  const trailer: Record<string, string> = {};
  for (let at = 0; at < body.byteLength; ) {
    const length = body.readUInt32BE(at + 1);
    const data = body.subarray(at + 5, at + 5 + length);
    if (body[at] & 0x80) {
      for (const line of data.toString("latin1").split("\r\n").filter(Boolean)) {
        const colon = line.indexOf(":");
        trailer[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
      }
    } else messages.push(data);
    at += 5 + length;
  }
  return { messages, trailer };
}

const NAMES_THE_MESSAGE = /request is not a valid memory\.v1\.StoreInteractionRequest: /;

describe("malformed protobuf through Connect's router on memory's gRPC port", () => {
  test("Connect binary: 400 invalid_argument naming the message", async () => {
    for (const [what, bytes] of Object.entries(malformedProtobuf)) {
      const answer = await call(
        {
          ":path": path("StoreInteraction"),
          "content-type": "application/proto",
          "connect-protocol-version": "1",
        },
        Uint8Array.from(bytes),
      );
      assert.equal(answer.status, 400, what);
      const error = JSON.parse(answer.body.toString("utf8"));
      assert.equal(error.code, "invalid_argument", `${what}: ${error.message}`);
      assert.match(error.message, NAMES_THE_MESSAGE, what);
    }
  });

  test("gRPC-Web binary: the trailer frame says INVALID_ARGUMENT", async () => {
    for (const [what, bytes] of Object.entries(malformedProtobuf)) {
      const answer = await call(
        { ":path": path("StoreInteraction"), "content-type": "application/grpc-web+proto" },
        frame(0, Uint8Array.from(bytes)),
      );
      const status = answer.headers["grpc-status"] !== undefined ? answer.headers : undefined;
      const trailer = status ?? grpcWebFrames(answer.body).trailer;
      assert.equal(trailer["grpc-status"], "3", `${what}: ${JSON.stringify(trailer)}`);
      assert.match(decodeURIComponent(String(trailer["grpc-message"])), NAMES_THE_MESSAGE, what);
    }
  });

  test("compressed gRPC: the trailers say INVALID_ARGUMENT", async () => {
    for (const [what, bytes] of Object.entries(malformedProtobuf)) {
      const answer = await call(
        {
          ":path": path("StoreInteraction"),
          "content-type": "application/grpc",
          "grpc-encoding": "gzip",
          te: "trailers",
        },
        frame(1, gzipSync(Uint8Array.from(bytes))),
      );
      const status = answer.trailers["grpc-status"] ? answer.trailers : answer.headers;
      assert.equal(status["grpc-status"], "3", `${what}: ${JSON.stringify(status)}`);
      assert.match(decodeURIComponent(String(status["grpc-message"])), NAMES_THE_MESSAGE, what);
    }
  });

  test("valid messages and other errors on the same paths are as before", async () => {
    const { CreateSessionRequestSchema, CreateSessionResponseSchema } = memoryV1;
    const request = toBinary(
      CreateSessionRequestSchema,
      create(CreateSessionRequestSchema, { tenantId: "t-parse", userId: "u1" }),
    );
    const viaConnect = await call(
      {
        ":path": path("CreateSession"),
        "content-type": "application/proto",
        "connect-protocol-version": "1",
      },
      request,
    );
    assert.equal(viaConnect.status, 200);
    assert.ok(fromBinary(CreateSessionResponseSchema, viaConnect.body).sessionId);
    const viaWeb = await call(
      { ":path": path("CreateSession"), "content-type": "application/grpc-web+proto" },
      frame(0, request),
    );
    const web = grpcWebFrames(viaWeb.body);
    assert.equal(web.trailer["grpc-status"], "0");
    assert.ok(fromBinary(CreateSessionResponseSchema, web.messages[0]).sessionId);
    // A valid message the service refuses keeps its own code.
    const missing = await call(
      {
        ":path": path("StoreInteraction"),
        "content-type": "application/proto",
        "connect-protocol-version": "1",
      },
      toBinary(
        memoryV1.StoreInteractionRequestSchema,
        create(memoryV1.StoreInteractionRequestSchema, {
          sessionId: "00000000-0000-4000-8000-000000000000",
          userMessage: "hi",
        }),
      ),
    );
    assert.equal(missing.status, 404);
    assert.equal(JSON.parse(missing.body.toString("utf8")).code, "not_found");
  });
});
