import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { memoryV1 } from "@atrium/api";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { createAuthenticator } from "../auth/authenticator.js";
import { callerAddressKey } from "./caller-address.js";
import { parseCidrList } from "./cidr.js";
import { apiKey, capturedLogger, memoryClient, restCall } from "./service-host.fixtures.js";
import { createServiceHost, type ServiceHostOptions } from "./service-host.js";

/** CreateSession answers with the caller address the handler was given. */
const echoAddress: Partial<ServiceImpl<typeof memoryV1.MemoryService>> = {
  createSession: (_request, context) => ({ sessionId: context.values.get(callerAddressKey) }),
};

interface Running {
  restUrl: string;
  grpcUrl: string;
  logs: ReturnType<typeof capturedLogger>;
  stop(): Promise<void>;
}

async function startHost(
  options: { allowed?: string[]; trusted?: string[] } & Pick<ServiceHostOptions, "authenticator">,
): Promise<Running> {
  const logs = capturedLogger();
  const host = createServiceHost({
    name: "memory",
    logger: logs.logger,
    rest: { host: "127.0.0.1", port: 0 },
    grpc: { host: "127.0.0.1", port: 0 },
    services: [{ service: memoryV1.MemoryService, implementation: echoAddress }],
    authenticator: options.authenticator,
    allowedCidrs: options.allowed && parseCidrList(options.allowed),
    trustedProxies: options.trusted && parseCidrList(options.trusted),
  });
  const urls = await host.start();
  return { restUrl: urls.restUrl, grpcUrl: urls.grpcUrl!, logs, stop: () => host.stop() };
}

/** The echoed address on success, else the REST status and body. */
async function viaRest(host: Running, headers: Record<string, string> = {}) {
  const res = await restCall(`${host.restUrl}/api/v1/sessions`, {
    method: "POST",
    headers,
    body: { tenant_id: "t", user_id: "u" },
  });
  if (res.status === 200 && typeof res.body === "object") return res.body.session_id;
  return { status: res.status, body: res.body };
}

/** The echoed address on success, else the gRPC code name. */
async function viaGrpc(host: Running, headers: Record<string, string> = {}) {
  try {
    const res = await memoryClient(host.grpcUrl).createSession(
      { tenantId: "t", userId: "u" },
      { headers },
    );
    return res.sessionId;
  } catch (error) {
    return Code[ConnectError.from(error).code];
  }
}

const refusedRest = {
  status: 403,
  body: { code: "ip_not_allowed", message: "caller address is not allowed" },
};

describe("caller address without trusted proxies", () => {
  let host: Running;
  before(async () => {
    host = await startHost({});
  });
  after(() => host.stop());

  test("handlers get the peer on both transports; X-Forwarded-For is ignored", async () => {
    const spoofed = { "x-forwarded-for": "203.0.113.7" };
    assert.equal(await viaRest(host), "127.0.0.1");
    assert.equal(await viaRest(host, spoofed), "127.0.0.1");
    assert.equal(await viaGrpc(host), "127.0.0.1");
    assert.equal(await viaGrpc(host, spoofed), "127.0.0.1");
  });
});

describe("caller address behind a trusted proxy", () => {
  let host: Running;
  before(async () => {
    host = await startHost({ trusted: ["127.0.0.1/32", "10.0.0.0/8"] });
  });
  after(() => host.stop());

  test("the right-most untrusted X-Forwarded-For hop is the caller on both transports", async () => {
    const forwarded = { "x-forwarded-for": "6.6.6.6, 198.51.100.1, 10.2.2.2" };
    assert.equal(await viaRest(host, forwarded), "198.51.100.1");
    assert.equal(await viaGrpc(host, forwarded), "198.51.100.1");
    assert.equal(await viaRest(host), "127.0.0.1");
    assert.equal(await viaGrpc(host), "127.0.0.1");
  });
});

describe("address allowlist", () => {
  let open: Running;
  let fenced: Running;
  let proxied: Running;
  before(async () => {
    const authenticator = createAuthenticator({ apiKey });
    open = await startHost({ allowed: ["127.0.0.1"], authenticator });
    fenced = await startHost({ allowed: ["10.0.0.0/8"], authenticator });
    proxied = await startHost({ allowed: ["10.0.0.0/8"], trusted: ["127.0.0.1"], authenticator });
  });
  after(async () => {
    await Promise.all([open.stop(), fenced.stop(), proxied.stop()]);
  });
  const key = { "x-api-key": apiKey };

  test("an allowed address passes on both transports, then authentication applies", async () => {
    assert.equal(await viaRest(open, key), "127.0.0.1");
    assert.equal(await viaGrpc(open, key), "127.0.0.1");
    assert.equal(((await viaRest(open)) as { status: number }).status, 401);
    assert.equal(await viaGrpc(open), "Unauthenticated");
  });

  test("other addresses are refused before authentication: 403 / PERMISSION_DENIED", async () => {
    assert.deepEqual(await viaRest(fenced, key), refusedRest);
    assert.deepEqual(await viaRest(fenced), refusedRest);
    assert.equal(await viaGrpc(fenced, key), "PermissionDenied");
    assert.equal(await viaGrpc(fenced), "PermissionDenied");
    const rejected = fenced.logs.entries().filter((e) => e.msg === "caller address rejected");
    assert.ok(rejected.length >= 4);
    assert.ok(rejected.every((e) => e.callerAddress === "127.0.0.1"));
    assert.ok(!fenced.logs.entries().some((e) => e.msg === "authentication rejected"));
  });

  test("X-Forwarded-For from an untrusted peer does not get a caller in", async () => {
    const spoofed = { ...key, "x-forwarded-for": "10.1.2.3" };
    assert.deepEqual(await viaRest(fenced, spoofed), refusedRest);
    assert.equal(await viaGrpc(fenced, spoofed), "PermissionDenied");
  });

  test("X-Forwarded-For from a trusted proxy decides on both transports", async () => {
    const inside = { ...key, "x-forwarded-for": "10.1.2.3" };
    const outside = { ...key, "x-forwarded-for": "10.1.2.3, 203.0.113.7" };
    assert.equal(await viaRest(proxied, inside), "10.1.2.3");
    assert.equal(await viaGrpc(proxied, inside), "10.1.2.3");
    assert.deepEqual(await viaRest(proxied, outside), refusedRest);
    assert.equal(await viaGrpc(proxied, outside), "PermissionDenied");
    assert.deepEqual(await viaRest(proxied, key), refusedRest);
  });

  test("/health and /metrics stay open to every address", async () => {
    assert.equal((await restCall(`${fenced.restUrl}/health`)).status, 200);
    assert.equal((await restCall(`${fenced.restUrl}/metrics`)).status, 200);
  });
});
