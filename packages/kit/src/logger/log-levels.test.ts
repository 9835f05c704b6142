import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { memoryV1 } from "@atrium/api";
import { echoIdentity, memoryClient } from "../server/service-host.fixtures.js";
import { createServiceHost } from "../server/service-host.js";
import { type LogLevel, logLevel, type RequestLogLevel, requestLogLevel } from "./log-levels.js";
import { createLogger } from "./logger.js";

test("LOG_LEVEL and REQUEST_LOG_LEVEL default to info and refuse other words, naming the variable", () => {
  assert.equal(logLevel({}), "info");
  assert.equal(logLevel({ LOG_LEVEL: "debug" }), "debug");
  assert.throws(() => logLevel({ LOG_LEVEL: "verbose" }), /LOG_LEVEL must be one of fatal, error/);
  assert.equal(requestLogLevel({}), "info");
  assert.equal(requestLogLevel({ REQUEST_LOG_LEVEL: "debug" }), "debug");
  assert.throws(() => requestLogLevel({ REQUEST_LOG_LEVEL: "warn" }), /REQUEST_LOG_LEVEL must be/);
});

/** The messages a host writes for one REST and one gRPC call. */
async function linesFor(level: LogLevel, requestLevel: RequestLogLevel): Promise<string[]> {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const host = createServiceHost({
    name: "memory",
    logger: createLogger({ name: "memory", level, destination }),
    rest: { host: "127.0.0.1", port: 0 },
    grpc: { host: "127.0.0.1", port: 0 },
    services: [{ service: memoryV1.MemoryService, implementation: echoIdentity }],
    requestLogLevel: requestLevel,
  });
  const urls = await host.start();
  try {
    const rest = await fetch(`${urls.restUrl}/api/v1/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tenant_id: "t", user_id: "u" }),
    });
    assert.equal(rest.status, 200);
    await memoryClient(urls.grpcUrl!).createSession({ tenantId: "t", userId: "u" });
  } finally {
    await host.stop();
  }
  return lines.map((line) => JSON.parse(line).msg);
}

test("request lines at debug stay out of an info log and appear at LOG_LEVEL=debug", async () => {
  const quiet = await linesFor("info", "debug");
  assert.ok(!quiet.includes("request completed"), quiet.join(", "));
  assert.ok(!quiet.includes("rpc completed"), quiet.join(", "));
  const verbose = await linesFor("debug", "debug");
  assert.ok(verbose.includes("request completed"));
  assert.ok(verbose.includes("rpc completed"));
  const usual = await linesFor("info", "info");
  assert.ok(usual.includes("request completed"));
  assert.ok(usual.includes("rpc completed"));
});
