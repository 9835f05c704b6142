import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, test } from "node:test";
import { memoryV1 } from "@atrium/api";
import { Code, ConnectError } from "@connectrpc/connect";
import { exportJWK, exportSPKI, type GenerateKeyPairResult, generateKeyPair } from "jose";
import { type ApiKeySet, apiKeyAuthenticator, createApiKeySet } from "../auth/api-key-set.js";
import { procedureName } from "../auth/auth-exemptions.js";
import { createAuthenticator } from "../auth/authenticator.js";
import { requestPrincipal } from "./rest-app.js";
import {
  apiKey,
  capturedLogger,
  echoIdentity,
  jwtSecret,
  memoryClient,
  type RpcProtocol,
  restCall,
  signJwt,
  type TlsClient,
  tamperedJwt,
  unsignedJwt,
} from "./service-host.fixtures.js";
import { createServiceHost, type ServiceHostOptions } from "./service-host.js";
import { createTestPki, type TestPki } from "./test-certificates.js";

const body = { tenant_id: "body-tenant", user_id: "body-user", agent_id: "body-agent" };
const claims = { tenant_id: "jwt-tenant", user_id: "jwt-user", agent_id: "jwt-agent" };
const grpcBody = { tenantId: "body-tenant", userId: "body-user", agentId: "body-agent" };

interface RunningHost {
  restUrl: string;
  grpcUrl: string;
  logs: ReturnType<typeof capturedLogger>;
  stop(): Promise<void>;
}

async function startHost(
  options: Partial<
    Pick<ServiceHostOptions, "authenticator" | "tls" | "healthChecks" | "configureRest">
  >,
): Promise<RunningHost> {
  const logs = capturedLogger();
  const host = createServiceHost({
    name: "memory",
    logger: logs.logger,
    rest: { host: "127.0.0.1", port: 0 },
    grpc: { host: "127.0.0.1", port: 0 },
    services: [{ service: memoryV1.MemoryService, implementation: echoIdentity }],
    ...options,
  });
  const urls = await host.start();
  return { restUrl: urls.restUrl, grpcUrl: urls.grpcUrl!, logs, stop: () => host.stop() };
}

/** CreateSession over REST; returns the status and the echoed "tenant/user/agent". */
async function restCreate(host: RunningHost, headers: Record<string, string>, tls?: TlsClient) {
  const res = await restCall(`${host.restUrl}/api/v1/sessions`, {
    method: "POST",
    headers,
    body,
    tls,
  });
  const sessionId = typeof res.body === "object" ? res.body.session_id : undefined;
  return { status: res.status, sessionId, body: res.body };
}

/**
 * CreateSession over gRPC; returns "OK" and the echoed identity, or the error code name. The
 * same call is made in the Connect protocol, which the host serves on the same port through
 * another path, and must end the same way.
 */
async function grpcCreate(
  host: RunningHost,
  headers: Record<string, string>,
  tls?: TlsClient,
  request = grpcBody,
) {
  const call = async (protocol: RpcProtocol) => {
    try {
      const res = await memoryClient(host.grpcUrl, tls, protocol).createSession(request, {
        headers,
      });
      return { code: "OK", sessionId: res.sessionId };
    } catch (error) {
      return { code: Code[ConnectError.from(error).code], message: (error as Error).message };
    }
  };
  const grpc = await call("grpc");
  const connect = await call("connect");
  assert.deepEqual(
    { code: connect.code, sessionId: connect.sessionId },
    { code: grpc.code, sessionId: grpc.sessionId },
    "the Connect protocol ends as gRPC does",
  );
  return grpc;
}

const rejections = (host: RunningHost) =>
  host.logs.entries().filter((e) => e.msg === "authentication rejected");

describe("service host without auth", () => {
  let host: RunningHost;
  before(async () => {
    host = await startHost({
      healthChecks: {
        cache: async () => {},
        database: async () => {
          throw new Error("connection refused");
        },
      },
    });
  });
  after(() => host.stop());

  test("both transports serve the same implementation with the body's identity", async () => {
    assert.deepEqual(await restCreate(host, {}), {
      status: 200,
      sessionId: "body-tenant/body-user/body-agent",
      body: { session_id: "body-tenant/body-user/body-agent" },
    });
    assert.deepEqual(await grpcCreate(host, {}), {
      code: "OK",
      sessionId: "body-tenant/body-user/body-agent",
    });
  });

  test("internal failures reach neither client with their message", async () => {
    const rest = await restCall(`${host.restUrl}/api/v1/sessions/s1`);
    assert.equal(rest.status, 500);
    assert.deepEqual(rest.body, { code: "Internal", message: "internal error" });
    for (const protocol of ["grpc", "connect"] as const) {
      const error = await memoryClient(host.grpcUrl, undefined, protocol)
        .getSession({ sessionId: "s1" })
        .then(() => assert.fail("expected an error"), ConnectError.from);
      assert.equal(error.code, Code.Internal, protocol);
      assert.equal(error.rawMessage, "internal error", protocol);
    }
    const failures = host.logs.raw();
    assert.ok(failures.includes("rpc failed"), "the cause is logged server-side");
  });

  test("/health is 200 and degraded when a check fails", async () => {
    const res = await restCall(`${host.restUrl}/health`);
    assert.equal(res.status, 200);
    const report = res.body as Record<string, unknown>;
    assert.equal(report.status, "degraded");
    assert.deepEqual(report.checks, { cache: "ok", database: "failing" });
  });

  test("unknown routes get a JSON 404", async () => {
    const res = await restCall(`${host.restUrl}/nope?x=1`);
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { code: "NotFound", message: "no route for GET /nope" });
  });

  test("malformed JSON is a 400 with Fastify's message", async () => {
    const res = await fetch(`${host.restUrl}/api/v1/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { code: string }).code, "InvalidArgument");
  });

  test("NUL and lone surrogates are refused before the handler on both transports", async () => {
    const refusals: [string, RequestInit, string][] = [
      [
        "/api/v1/sessions",
        { method: "POST", body: JSON.stringify({ ...body, tenant_id: "a\u0000b" }) },
        "tenant_id must not contain a NUL character",
      ],
      [
        "/api/v1/sessions",
        { method: "POST", body: '{"tenant_id":"t","user_id":"\\ud800"}' },
        "user_id must be valid Unicode (it holds a lone surrogate)",
      ],
      // GetSession throws when reached: a 400 proves the handler never ran.
      ["/api/v1/sessions/abc%00def", {}, "session_id must not contain a NUL character"],
      ["/api/v1/sessions/s1?x=%00", {}, "x must not contain a NUL character"],
    ];
    for (const [path, init, message] of refusals) {
      const res = await fetch(`${host.restUrl}${path}`, {
        ...init,
        headers: { "content-type": "application/json" },
      });
      assert.equal(res.status, 400, path);
      assert.deepEqual(await res.json(), { code: "InvalidArgument", message }, path);
    }
    const grpc = await grpcCreate(host, {}, undefined, { ...grpcBody, userId: "u\u0000" });
    assert.deepEqual(grpc, {
      code: "InvalidArgument",
      message: "[invalid_argument] userId must not contain a NUL character",
    });
  });

  test("/metrics counts both transports by operation and status", async () => {
    await restCreate(host, {});
    await grpcCreate(host, {});
    const res = await restCall(`${host.restUrl}/metrics`);
    assert.equal(res.status, 200);
    const lines = String(res.body).split("\n");
    const sample = (metric: string, labels: string[]) =>
      lines.find((l) => l.startsWith(`${metric}{`) && labels.every((x) => l.includes(x)));
    const rest = ['transport="rest"', 'operation="POST /api/v1/sessions"', 'status="200"'];
    const grpc = [
      'transport="grpc"',
      'operation="memory.v1.MemoryService/CreateSession"',
      'status="OK"',
    ];
    for (const labels of [rest, grpc]) {
      assert.ok(sample("atrium_requests_total", [...labels, 'service="memory"']), labels[0]);
      assert.ok(sample("atrium_request_duration_seconds_count", labels), labels[0]);
    }
  });
});

describe("API key", () => {
  let host: RunningHost;
  before(async () => {
    host = await startHost({ authenticator: createAuthenticator({ apiKey }) });
  });
  after(() => host.stop());

  test("accepts X-API-Key and Authorization: Bearer on both transports", async () => {
    const variants: Record<string, string>[] = [
      { "x-api-key": apiKey },
      { authorization: `Bearer ${apiKey}` },
    ];
    for (const headers of variants) {
      assert.equal((await restCreate(host, headers)).status, 200);
      assert.equal((await grpcCreate(host, headers)).code, "OK");
    }
  });

  test("surrounding whitespace is normalised the same way on both transports", async () => {
    for (const key of [`${apiKey} `, ` ${apiKey}\t`]) {
      const headers = { "x-api-key": key };
      assert.equal((await restCreate(host, headers)).status, 200, JSON.stringify(key));
      assert.equal((await grpcCreate(host, headers)).code, "OK", JSON.stringify(key));
    }
    for (const authorization of [` Bearer ${apiKey}`, `Bearer ${apiKey}\t`]) {
      const headers = { authorization };
      assert.equal((await restCreate(host, headers)).status, 200, JSON.stringify(authorization));
      assert.equal((await grpcCreate(host, headers)).code, "OK", JSON.stringify(authorization));
    }
    const padded = { "x-api-key": `${apiKey}x ` };
    assert.equal((await restCreate(host, padded)).status, 401);
    assert.equal((await grpcCreate(host, padded)).code, "Unauthenticated");
  });

  test("missing or wrong key is 401 / UNAUTHENTICATED, logged with the mechanism", async () => {
    const variants: Record<string, string>[] = [
      {},
      { "x-api-key": "wrong" },
      { authorization: "Bearer wrong" },
    ];
    const before = rejections(host).length;
    for (const headers of variants) {
      const rest = await restCreate(host, headers);
      assert.equal(rest.status, 401);
      assert.equal((rest.body as { code: string }).code, "Unauthenticated");
      assert.equal((await grpcCreate(host, headers)).code, "Unauthenticated");
    }
    const logged = rejections(host).slice(before);
    assert.equal(logged.length, 9, "3 REST, 3 gRPC and 3 Connect calls");
    assert.ok(logged.every((e) => e.mechanism === "api_key"));
    assert.ok(!host.logs.raw().includes('wrong"'), "the presented key is never logged");
  });

  test("/health and /metrics stay open", async () => {
    const health = await restCall(`${host.restUrl}/health`);
    assert.equal(health.status, 200);
    const report = health.body as Record<string, unknown>;
    assert.equal(report.status, "healthy");
    assert.equal(report.service, "memory");
    assert.equal(typeof report.timestamp, "string");
    assert.equal((await restCall(`${host.restUrl}/metrics`)).status, 200);
  });
});

describe("a key check the service declares (exempt RPCs and paths, 401 vs 403)", () => {
  let host: RunningHost;
  let checks = 0;
  before(async () => {
    const keys = createApiKeySet({ keys: [apiKey], files: [], reloadMs: 60_000 });
    const counting: ApiKeySet = {
      ...keys,
      check(presented) {
        checks++;
        return keys.check(presented);
      },
    };
    host = await startHost({
      authenticator: apiKeyAuthenticator({
        keys: counting,
        wrongKey: Code.PermissionDenied,
        exempt: {
          procedures: [procedureName(memoryV1.MemoryService, "CreateSession")],
          paths: ["/open-page"],
        },
      }),
    });
  });
  after(() => host.stop());

  /** GetSession (not exempt; its handler always fails) over REST, gRPC and Connect. */
  const getSession = async (headers: Record<string, string>) => {
    const rest = await restCall(`${host.restUrl}/api/v1/sessions/s-1`, { headers });
    const rpc = async (protocol: RpcProtocol) => {
      try {
        await memoryClient(host.grpcUrl, undefined, protocol).getSession(
          { sessionId: "s-1" },
          { headers },
        );
        return "OK";
      } catch (error) {
        return Code[ConnectError.from(error).code];
      }
    };
    return {
      rest: rest.status,
      code: (rest.body as { code?: string }).code,
      grpc: await rpc("grpc"),
      connect: await rpc("connect"),
    };
  };

  test("an exempt RPC is open on its REST route and on gRPC, and no key is looked at", async () => {
    const before = checks;
    assert.equal((await restCreate(host, {})).status, 200);
    assert.equal((await grpcCreate(host, {})).code, "OK");
    assert.equal((await restCreate(host, { "x-api-key": "wrong" })).status, 200);
    assert.equal(checks, before);
  });

  test("any other RPC: missing 401, wrong as declared (403), the same on every transport", async () => {
    assert.deepEqual(await getSession({}), {
      rest: 401,
      code: "Unauthenticated",
      grpc: "Unauthenticated",
      connect: "Unauthenticated",
    });
    assert.deepEqual(await getSession({ "x-api-key": "wrong" }), {
      rest: 403,
      code: "PermissionDenied",
      grpc: "PermissionDenied",
      connect: "PermissionDenied",
    });
    // Past the check, the handler's own failure.
    assert.deepEqual(await getSession({ "x-api-key": apiKey }), {
      rest: 500,
      code: "Internal",
      grpc: "Internal",
      connect: "Internal",
    });
  });

  test("an exempt path is open; any other path needs a key, routed or not", async () => {
    assert.equal((await restCall(`${host.restUrl}/open-page`)).status, 404);
    assert.equal((await restCall(`${host.restUrl}/closed-page`)).status, 401);
  });

  test("the key is checked once per request on each transport", async () => {
    const headers = { "x-api-key": apiKey };
    let before = checks;
    await restCall(`${host.restUrl}/api/v1/sessions/s-1`, { headers });
    assert.equal(checks - before, 1, "REST");
    for (const protocol of ["grpc", "connect"] as const) {
      before = checks;
      await memoryClient(host.grpcUrl, undefined, protocol)
        .getSession({ sessionId: "s-1" }, { headers })
        .catch(() => undefined);
      assert.equal(checks - before, 1, protocol);
    }
  });
});

describe("JWT", () => {
  let host: RunningHost;
  before(async () => {
    host = await startHost({ authenticator: createAuthenticator({ jwt: { secret: jwtSecret } }) });
  });
  after(() => host.stop());

  test("the token's identity overrides the body on both transports", async () => {
    const token = await signJwt(claims);
    const variants: Record<string, string>[] = [
      { "x-jwt-token": token },
      { authorization: `JWT ${token}` },
    ];
    for (const headers of variants) {
      assert.equal((await restCreate(host, headers)).sessionId, "jwt-tenant/jwt-user/jwt-agent");
      assert.equal((await grpcCreate(host, headers)).sessionId, "jwt-tenant/jwt-user/jwt-agent");
    }
    const noAgent = await signJwt({ tenant_id: "t", user_id: "u" });
    assert.equal((await restCreate(host, { "x-jwt-token": noAgent })).sessionId, "t/u/");
  });

  test("a validly signed token whose claim holds NUL or a lone surrogate is 401 on both", async () => {
    for (const [claim, value, reason] of [
      ["tenant_id", "tA\u0000", "must not contain a NUL character"],
      ["user_id", "u\ud800", "must be valid Unicode (it holds a lone surrogate)"],
      ["agent_id", "\u0000", "must not contain a NUL character"],
    ]) {
      const headers = { "x-jwt-token": await signJwt({ ...claims, [claim]: value }) };
      const rest = await restCreate(host, headers);
      assert.equal(rest.status, 401, claim);
      assert.deepEqual(rest.body, {
        code: "Unauthenticated",
        message: `JWT claim ${claim} ${reason}`,
      });
      assert.equal((await grpcCreate(host, headers)).code, "Unauthenticated", claim);
    }
  });

  test("a token with surrounding whitespace is read the same way on both transports", async () => {
    const token = await signJwt(claims);
    const padded: Record<string, string>[] = [
      { "x-jwt-token": ` ${token}\t` },
      { authorization: `  JWT ${token} ` },
      { authorization: `JWT ${token}\t` },
    ];
    for (const headers of padded) {
      const expected = "jwt-tenant/jwt-user/jwt-agent";
      assert.equal((await restCreate(host, headers)).sessionId, expected, JSON.stringify(headers));
      assert.equal((await grpcCreate(host, headers)).sessionId, expected, JSON.stringify(headers));
    }
  });

  test("a token with 12 KB of claims is over the header limit on both transports", async () => {
    const headers = { "x-jwt-token": await signJwt({ ...claims, agent_id: "a".repeat(12_000) }) };
    assert.equal((await restCreate(host, headers)).status, 431);
    assert.equal((await grpcCreate(host, headers)).code, "ResourceExhausted");
  });

  test("missing, expired, tampered, wrong-secret, alg none and missing-claim tokens fail", async () => {
    const valid = await signJwt(claims);
    const cases: [string, Record<string, string>, string][] = [
      ["missing", {}, "missing JWT"],
      ["expired", { "x-jwt-token": await signJwt(claims, { expiresIn: -60 }) }, "JWT expired"],
      ["tampered", { "x-jwt-token": tamperedJwt(valid, { tenant_id: "other" }) }, "invalid JWT"],
      [
        "wrong secret",
        { "x-jwt-token": await signJwt(claims, { secret: "another-secret-another-secret!!" }) },
        "invalid JWT",
      ],
      ["alg none", { "x-jwt-token": unsignedJwt(claims) }, "invalid JWT"],
      [
        "no user_id",
        { "x-jwt-token": await signJwt({ tenant_id: "t" }) },
        "JWT lacks claim user_id",
      ],
      [
        "no tenant_id",
        { "x-jwt-token": await signJwt({ user_id: "u" }) },
        "JWT lacks claim tenant_id",
      ],
      [
        "no exp",
        { "x-jwt-token": await signJwt(claims, { omitExp: true }) },
        "JWT lacks claim exp",
      ],
      ["bearer is not JWT", { authorization: `Bearer ${valid}` }, "missing JWT"],
    ];
    for (const [name, headers, message] of cases) {
      const rest = await restCreate(host, headers);
      assert.equal(rest.status, 401, name);
      assert.deepEqual(rest.body, { code: "Unauthenticated", message }, name);
      const grpc = await grpcCreate(host, headers);
      assert.equal(grpc.code, "Unauthenticated", name);
    }
    assert.ok(rejections(host).every((e) => e.mechanism === "jwt"));
  });
});

/** Serves one JWKS document the way an identity provider does. */
async function serveJwks(jwks: object): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/jwks`, server };
}

describe("JWT matrix: audience, issuer, HS256, RS256 (PEM) and ES256 (JWKS)", () => {
  const audience = "atrium-memory";
  const issuer = "https://idp.example";
  const hosts: RunningHost[] = [];
  let jwks: Server;
  let keys: {
    rsa: GenerateKeyPairResult;
    ec: GenerateKeyPairResult;
    otherRsa: GenerateKeyPairResult;
    otherEc: GenerateKeyPairResult;
    rsaPem: string;
  };
  let hs: RunningHost;
  let rs: RunningHost;
  let es: RunningHost;

  before(async () => {
    const [rsa, ec, otherRsa, otherEc] = await Promise.all([
      generateKeyPair("RS256"),
      generateKeyPair("ES256"),
      generateKeyPair("RS256"),
      generateKeyPair("ES256"),
    ]);
    keys = { rsa, ec, otherRsa, otherEc, rsaPem: await exportSPKI(rsa.publicKey) };
    const served = await serveJwks({
      keys: [{ ...(await exportJWK(ec.publicKey)), kid: "ec-1", alg: "ES256", use: "sig" }],
    });
    jwks = served.server;
    const claimChecks = { audience, issuer };
    hs = await startHost({
      authenticator: createAuthenticator({ jwt: { secret: jwtSecret, ...claimChecks } }),
    });
    rs = await startHost({
      authenticator: createAuthenticator({ jwt: { publicKey: keys.rsaPem, ...claimChecks } }),
    });
    es = await startHost({
      authenticator: createAuthenticator({ jwt: { jwksUrl: served.url, ...claimChecks } }),
    });
    hosts.push(hs, rs, es);
  });
  after(async () => {
    await Promise.all(hosts.map((h) => h.stop()));
    jwks.close();
  });

  const good = { audience, issuer };
  const rsKey = (pair: GenerateKeyPairResult) => ({ alg: "RS256" as const, key: pair.privateKey });
  const esKey = (pair: GenerateKeyPairResult, kid = "ec-1") => ({
    alg: "ES256" as const,
    key: pair.privateKey,
    kid,
  });

  test("each host accepts its own well-formed token on both transports", async () => {
    const tokens: [RunningHost, string][] = [
      [hs, await signJwt(claims, good)],
      [rs, await signJwt(claims, { ...good, privateKey: rsKey(keys.rsa) })],
      [es, await signJwt(claims, { ...good, privateKey: esKey(keys.ec) })],
    ];
    for (const [host, token] of tokens) {
      const headers = { "x-jwt-token": token };
      assert.equal((await restCreate(host, headers)).sessionId, "jwt-tenant/jwt-user/jwt-agent");
      assert.equal((await grpcCreate(host, headers)).sessionId, "jwt-tenant/jwt-user/jwt-agent");
    }
  });

  test("expired, tampered, alg none, wrong audience, issuer, key or algorithm: 401 / UNAUTHENTICATED", async () => {
    const rsGood = await signJwt(claims, { ...good, privateKey: rsKey(keys.rsa) });
    const esGood = await signJwt(claims, { ...good, privateKey: esKey(keys.ec) });
    const cases: [string, RunningHost, string, string][] = [
      ["HS256 no audience", hs, await signJwt(claims, { issuer }), "JWT lacks claim aud"],
      ["HS256 no issuer", hs, await signJwt(claims, { audience }), "JWT lacks claim iss"],
      [
        "HS256 wrong audience",
        hs,
        await signJwt(claims, { ...good, audience: "some-other-service" }),
        "JWT audience not accepted",
      ],
      [
        "HS256 wrong issuer",
        hs,
        await signJwt(claims, { ...good, issuer: "https://evil.example" }),
        "JWT issuer not accepted",
      ],
      ["HS256 expired", hs, await signJwt(claims, { ...good, expiresIn: -60 }), "JWT expired"],
      ["HS256 alg none", hs, unsignedJwt(claims), "invalid JWT"],
      ["RS256 tampered", rs, tamperedJwt(rsGood, { tenant_id: "other" }), "invalid JWT"],
      [
        "RS256 other key",
        rs,
        await signJwt(claims, { ...good, privateKey: rsKey(keys.otherRsa) }),
        "invalid JWT",
      ],
      [
        "RS256 expired",
        rs,
        await signJwt(claims, { ...good, expiresIn: -60, privateKey: rsKey(keys.rsa) }),
        "JWT expired",
      ],
      [
        "RS256 wrong audience",
        rs,
        await signJwt(claims, { ...good, audience: "x", privateKey: rsKey(keys.rsa) }),
        "JWT audience not accepted",
      ],
      [
        "HS256 keyed with the RS256 public key (key confusion)",
        rs,
        await signJwt(claims, { ...good, secret: keys.rsaPem }),
        "invalid JWT",
      ],
      ["RS256 host, alg none", rs, unsignedJwt(claims), "invalid JWT"],
      ["ES256 tampered", es, tamperedJwt(esGood, { user_id: "other" }), "invalid JWT"],
      [
        "ES256 other key, same kid",
        es,
        await signJwt(claims, { ...good, privateKey: esKey(keys.otherEc) }),
        "invalid JWT",
      ],
      [
        "ES256 unknown kid",
        es,
        await signJwt(claims, { ...good, privateKey: esKey(keys.ec, "nope") }),
        "invalid JWT",
      ],
      [
        "ES256 wrong issuer",
        es,
        await signJwt(claims, {
          ...good,
          issuer: "https://evil.example",
          privateKey: esKey(keys.ec),
        }),
        "JWT issuer not accepted",
      ],
      [
        "RS256 token on the ES256 host",
        es,
        await signJwt(claims, { ...good, privateKey: rsKey(keys.rsa) }),
        "invalid JWT",
      ],
      ["HS256 token on the ES256 host", es, await signJwt(claims, good), "invalid JWT"],
    ];
    for (const [name, host, token, message] of cases) {
      const headers = { "x-jwt-token": token };
      const rest = await restCreate(host, headers);
      assert.equal(rest.status, 401, name);
      assert.deepEqual(rest.body, { code: "Unauthenticated", message }, name);
      const grpc = await grpcCreate(host, headers);
      assert.equal(grpc.code, "Unauthenticated", name);
    }
  });
});

describe("API key and JWT together", () => {
  let host: RunningHost;
  before(async () => {
    host = await startHost({
      authenticator: createAuthenticator({ apiKey, jwt: { secret: jwtSecret } }),
    });
  });
  after(() => host.stop());

  test("both credentials pass; either missing fails, the key checked first", async () => {
    const token = await signJwt(claims);
    const both = { "x-api-key": apiKey, authorization: `JWT ${token}` };
    assert.equal((await restCreate(host, both)).sessionId, "jwt-tenant/jwt-user/jwt-agent");
    assert.equal((await grpcCreate(host, both)).sessionId, "jwt-tenant/jwt-user/jwt-agent");

    const jwtOnly = { "x-jwt-token": token };
    const keyOnly = { authorization: `Bearer ${apiKey}` };
    assert.equal((await restCreate(host, jwtOnly)).status, 401);
    assert.equal((await grpcCreate(host, jwtOnly)).code, "Unauthenticated");
    assert.equal((await restCreate(host, keyOnly)).status, 401);
    assert.equal((await grpcCreate(host, keyOnly)).code, "Unauthenticated");
    assert.deepEqual(
      rejections(host).map((e) => e.mechanism),
      ["api_key", "api_key", "api_key", "jwt", "jwt", "jwt"],
    );
  });
});

describe("the principal a route reads is the host's authentication result", () => {
  const whoami: ServiceHostOptions["configureRest"] = (app) => {
    app.get("/whoami", async (request) => requestPrincipal(request));
  };
  const hosts: RunningHost[] = [];
  after(() => Promise.all(hosts.map((host) => host.stop())));
  const principal = async (
    options: Parameters<typeof startHost>[0],
    headers: Record<string, string>,
  ) => {
    const host = await startHost({ ...options, configureRest: whoami });
    hosts.push(host);
    const res = await restCall(`${host.restUrl}/whoami`, { method: "GET", headers });
    assert.equal(res.status, 200);
    return res.body;
  };

  test("without authentication, credentials a caller sends prove nothing", async () => {
    const token = await signJwt(claims);
    const spoofs: Record<string, string>[] = [
      { "x-api-key": apiKey },
      { authorization: `Bearer ${apiKey}` },
      { "x-jwt-token": token },
    ];
    for (const spoof of spoofs) {
      assert.deepEqual(await principal({}, spoof), { kind: "anonymous" }, Object.keys(spoof)[0]);
    }
  });

  test("the API key or the JWT's user, as checked", async () => {
    assert.deepEqual(
      await principal({ authenticator: createAuthenticator({ apiKey }) }, { "x-api-key": apiKey }),
      { kind: "api_key" },
    );
    const both = createAuthenticator({ apiKey, jwt: { secret: jwtSecret } });
    assert.deepEqual(
      await principal(
        { authenticator: both },
        {
          "x-api-key": apiKey,
          "x-jwt-token": await signJwt(claims),
        },
      ),
      {
        kind: "user",
        identity: { tenantId: "jwt-tenant", userId: "jwt-user", agentId: "jwt-agent" },
      },
    );
  });
});

describe("mTLS", () => {
  let pki: TestPki;
  let host: RunningHost;
  let combined: RunningHost;
  before(async () => {
    pki = await createTestPki();
    const tls = { ...pki.server, ca: pki.ca.cert, requireClientCert: true };
    host = await startHost({ tls, authenticator: createAuthenticator({ mtls: true }) });
    combined = await startHost({
      tls,
      authenticator: createAuthenticator({ mtls: true, apiKey, jwt: { secret: jwtSecret } }),
    });
  });
  after(() => Promise.all([host?.stop(), combined?.stop()]));

  test("a client certificate from the CA is accepted on both transports", async () => {
    const tls = { ca: pki.ca.cert, cert: pki.client };
    assert.ok(host.restUrl.startsWith("https://"));
    assert.equal((await restCreate(host, {}, tls)).status, 200);
    assert.equal((await grpcCreate(host, {}, tls)).code, "OK");
    assert.equal((await restCall(`${host.restUrl}/health`, { tls })).status, 200);
  });

  test("no certificate or one from another CA is refused at the handshake", async () => {
    for (const tls of [{ ca: pki.ca.cert }, { ca: pki.ca.cert, cert: pki.foreignClient }]) {
      await assert.rejects(restCreate(host, {}, tls), (error: NodeJS.ErrnoException) => {
        assert.ok(error.code, "a socket or TLS error, not an HTTP response");
        return true;
      });
      const grpc = await grpcCreate(host, {}, tls);
      assert.notEqual(grpc.code, "OK");
      assert.notEqual(grpc.code, "Unauthenticated", "refused before any RPC ran");
    }
    assert.equal(rejections(host).length, 0);
  });

  test("with API key and JWT, all three must pass", async () => {
    const tls = { ca: pki.ca.cert, cert: pki.client };
    const token = await signJwt(claims);
    const headers = { "x-api-key": apiKey, "x-jwt-token": token };
    assert.equal(
      (await restCreate(combined, headers, tls)).sessionId,
      "jwt-tenant/jwt-user/jwt-agent",
    );
    assert.equal(
      (await grpcCreate(combined, headers, tls)).sessionId,
      "jwt-tenant/jwt-user/jwt-agent",
    );
    assert.equal((await restCreate(combined, { "x-api-key": apiKey }, tls)).status, 401);
    assert.equal(
      (await grpcCreate(combined, { "x-jwt-token": token }, tls)).code,
      "Unauthenticated",
    );
    await assert.rejects(restCreate(combined, headers, { ca: pki.ca.cert }));
  });
});
