import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { connect as connectHttp2 } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { brokerV1, gatewayV1, grpcHealthV1, memoryV1 } from "@atrium/api";
import { type BrokerService, startBrokerService } from "@atrium/broker";
import { testBrokerEnv } from "@atrium/broker/testing";
import { type GatewayService, startGatewayService } from "@atrium/gateway";
import { Code, codeForHttpStatus, createLogger, type RunningService } from "@atrium/kit";
import { createTestPostgres, needsServer, type TestPostgres } from "@atrium/kit/testing";
import { startMemoryService } from "@atrium/memory";
import {
  create,
  type DescMessage,
  type MessageInitShape,
  toBinary,
  toJsonString,
} from "@bufbuild/protobuf";
import { SignJWT } from "jose";

/**
 * Issue 28's goal "REST and gRPC agree on all auth checks": every credential case an attacker or a
 * misconfigured client sends, against representative routes of memory (API key and JWT), the
 * broker and the gateway (API keys, rotated through a key file), public probes included, over
 * REST, binary gRPC and Connect. Each RPC transport's outcome must be the REST outcome read
 * through the contract's status table (kit's codeForHttpStatus; 413 and 431 are
 * RESOURCE_EXHAUSTED as docs/auth.md "Limits" says), and each must be the expected one, so a
 * refusal both transports got wrong in the same way fails too.
 */
const logger = createLogger({ name: "auth-matrix", level: "silent" });
const dataDir = mkdtempSync(join(tmpdir(), "atrium-auth-matrix-"));

const memoryKey = `memory-${randomBytes(8).toString("hex")}`;
const jwtSecret = randomBytes(32).toString("hex");
const audience = "atrium-memory";
const issuer = "https://issuer.test";
const brokerKey = `broker-${randomBytes(8).toString("hex")}`;
const brokerFileKey = `broker-file-${randomBytes(8).toString("hex")}`;
const brokerRevokedKey = `broker-revoked-${randomBytes(8).toString("hex")}`;
const gatewayKey = `gateway-${randomBytes(8).toString("hex")}`;
const gatewayRevokedKey = `gateway-revoked-${randomBytes(8).toString("hex")}`;
const brokerKeyFile = join(dataDir, "broker-keys");
const gatewayKeyFile = join(dataDir, "gateway-keys");

let memoryPg: TestPostgres | undefined;
let brokerPg: TestPostgres | undefined;
let memory: RunningService;
let broker: BrokerService;
let gateway: GatewayService;

// ---- Credentials -----------------------------------------------------------------------------

const claims = { tenant_id: "t-matrix", user_id: "u-matrix", agent_id: "a-matrix" };

interface SignOptions {
  secret?: string;
  audience?: string;
  issuer?: string;
  expiresAt?: number;
  notBefore?: number;
}

const now = () => Math.floor(Date.now() / 1000);

function signJwt(payload: Record<string, unknown>, options: SignOptions = {}): Promise<string> {
  const jwt = new SignJWT(payload)
    .setProtectedHeader({ alg: "HS256" })
    .setIssuedAt()
    .setAudience(options.audience ?? audience)
    .setIssuer(options.issuer ?? issuer)
    .setExpirationTime(options.expiresAt ?? now() + 3600);
  if (options.notBefore !== undefined) jwt.setNotBefore(options.notBefore);
  return jwt.sign(new TextEncoder().encode(options.secret ?? jwtSecret));
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** The valid token with its payload replaced and its signature kept. */
function tampered(token: string, payload: Record<string, unknown>): string {
  const [header, , signature] = token.split(".");
  return `${header}.${base64url({ ...payload, aud: audience, iss: issuer, exp: now() + 3600 })}.${signature}`;
}

const unsigned = (payload: Record<string, unknown>) =>
  `${base64url({ alg: "none", typ: "JWT" })}.${base64url({ ...payload, aud: audience, iss: issuer, exp: now() + 3600 })}.`;

/**
 * One credential case: the headers sent, and the code it must end in on a route that needs
 * credentials (`undefined`: accepted). `beforeAuth` refusals (the header limit) hold on public
 * routes too. `padded` cases send a credential with surrounding whitespace, which the two
 * transports cannot read alike: HTTP/1.1 strips it from the value (RFC 9112 §5), HTTP/2 makes
 * such a field malformed (RFC 9113 §8.2.1) and Node's HTTP/2 layer (nghttp2) drops the field
 * before any application code sees it, so the gRPC port sees no credential at all.
 */
interface CredentialCase {
  name: string;
  headers: Record<string, string>;
  refusal?: Code;
  beforeAuth?: boolean;
  padded?: boolean;
}

async function memoryCases(): Promise<CredentialCase[]> {
  const valid = await signJwt(claims);
  const key = { "x-api-key": memoryKey };
  const withKey = (token: string) => ({ ...key, "x-jwt-token": token });
  const unauthenticated = Code.Unauthenticated;
  return [
    { name: "key and token", headers: withKey(valid) },
    { name: "the same token replayed", headers: withKey(valid) },
    {
      name: "token as Authorization: JWT",
      headers: { authorization: `JWT ${valid}`, "x-api-key": memoryKey },
    },
    {
      name: "key as Bearer, token as X-JWT-Token",
      headers: { authorization: `Bearer ${memoryKey}`, "x-jwt-token": valid },
    },
    { name: "no credentials", headers: {}, refusal: unauthenticated },
    { name: "token without key", headers: { "x-jwt-token": valid }, refusal: unauthenticated },
    { name: "key without token", headers: key, refusal: unauthenticated },
    {
      name: "empty key",
      headers: { "x-api-key": "", "x-jwt-token": valid },
      refusal: unauthenticated,
    },
    {
      name: "blank key",
      headers: { "x-api-key": "   ", "x-jwt-token": valid },
      refusal: unauthenticated,
    },
    { name: "empty token", headers: withKey(""), refusal: unauthenticated },
    {
      name: "wrong key",
      headers: { "x-api-key": `${memoryKey}x`, "x-jwt-token": valid },
      refusal: unauthenticated,
    },
    {
      name: "key in another case",
      headers: { "x-api-key": memoryKey.toUpperCase(), "x-jwt-token": valid },
      refusal: unauthenticated,
    },
    {
      name: "key with surrounding spaces",
      headers: { "x-api-key": ` ${memoryKey}\t`, "x-jwt-token": valid },
      padded: true,
    },
    { name: "token with surrounding spaces", headers: withKey(`  ${valid} `), padded: true },
    {
      name: "key under a wrong scheme (Basic)",
      headers: { authorization: `Basic ${memoryKey}`, "x-jwt-token": valid },
      refusal: unauthenticated,
    },
    {
      name: "token under a wrong scheme (Bearer)",
      headers: { ...key, authorization: `Bearer ${valid}` },
      refusal: unauthenticated,
    },
    {
      name: "expired token",
      headers: withKey(await signJwt(claims, { expiresAt: now() - 60 })),
      refusal: unauthenticated,
    },
    {
      name: "token not yet valid",
      headers: withKey(await signJwt(claims, { notBefore: now() + 3600 })),
      refusal: unauthenticated,
    },
    {
      name: "tampered signature",
      headers: withKey(tampered(valid, { ...claims, tenant_id: "t-other" })),
      refusal: unauthenticated,
    },
    {
      name: "signed with another secret",
      headers: withKey(await signJwt(claims, { secret: randomBytes(32).toString("hex") })),
      refusal: unauthenticated,
    },
    {
      name: "wrong audience",
      headers: withKey(await signJwt(claims, { audience: "another-service" })),
      refusal: unauthenticated,
    },
    {
      name: "wrong issuer",
      headers: withKey(await signJwt(claims, { issuer: "https://evil.test" })),
      refusal: unauthenticated,
    },
    { name: "alg none", headers: withKey(unsigned(claims)), refusal: unauthenticated },
    {
      name: "no tenant_id claim",
      headers: withKey(await signJwt({ user_id: "u-matrix" })),
      refusal: unauthenticated,
    },
    {
      name: "NUL in a claim",
      headers: withKey(await signJwt({ ...claims, tenant_id: "tA\u0000" })),
      refusal: unauthenticated,
    },
    {
      name: "lone surrogate in a claim",
      headers: withKey(await signJwt({ ...claims, user_id: "u\ud800" })),
      refusal: unauthenticated,
    },
    {
      name: "token with 12 KB of claims",
      headers: withKey(await signJwt({ ...claims, agent_id: "a".repeat(12_000) })),
      refusal: Code.ResourceExhausted,
      beforeAuth: true,
    },
  ];
}

/** The cases of a service whose one credential is X-API-Key from a rotated set of keys. */
async function keyCases(options: {
  key: string;
  revoked: string;
  wrongKey: Code;
}): Promise<CredentialCase[]> {
  const { key, revoked, wrongKey } = options;
  return [
    { name: "valid key", headers: { "x-api-key": key } },
    {
      name: "key with surrounding spaces",
      headers: { "x-api-key": `  ${key}\t` },
      padded: true,
    },
    { name: "no key", headers: {}, refusal: Code.Unauthenticated },
    { name: "empty key", headers: { "x-api-key": "" }, refusal: Code.Unauthenticated },
    { name: "blank key", headers: { "x-api-key": " \t " }, refusal: Code.Unauthenticated },
    { name: "wrong key", headers: { "x-api-key": `${key}x` }, refusal: wrongKey },
    { name: "key in another case", headers: { "x-api-key": key.toUpperCase() }, refusal: wrongKey },
    {
      name: "revoked key (removed from the key file)",
      headers: { "x-api-key": revoked },
      refusal: wrongKey,
    },
    {
      name: "key under a wrong scheme (Bearer)",
      headers: { authorization: `Bearer ${key}` },
      refusal: Code.Unauthenticated,
    },
    {
      name: "a JWT where the key belongs",
      headers: { "x-api-key": await signJwt(claims) },
      refusal: wrongKey,
    },
    {
      name: "valid key beside a token with 12 KB of claims",
      headers: {
        "x-api-key": key,
        "x-jwt-token": await signJwt({ ...claims, agent_id: "a".repeat(12_000) }),
      },
      refusal: Code.ResourceExhausted,
      beforeAuth: true,
    },
  ];
}

// ---- Routes and transports -------------------------------------------------------------------

/** One operation as REST and as an RPC with the same request. */
interface Route<Schema extends DescMessage = DescMessage> {
  name: string;
  /** Open without credentials (the host's probes, a service's exempt RPCs). */
  public?: boolean;
  rest: { method: "GET" | "POST"; path: string; body?: unknown };
  rpc: { procedure: string; schema: Schema; request: MessageInitShape<Schema> };
}

const route = <Schema extends DescMessage>(r: Route<Schema>) => r as unknown as Route;

const healthRoute = route({
  name: "/health ↔ grpc.health.v1.Health/Check",
  public: true,
  rest: { method: "GET", path: "/health" },
  rpc: {
    procedure: "/grpc.health.v1.Health/Check",
    schema: grpcHealthV1.HealthCheckRequestSchema,
    request: {},
  },
});

const memoryRoutes: Route[] = [
  healthRoute,
  route({
    name: "CreateSession",
    rest: { method: "POST", path: "/api/v1/sessions", body: { user_id: "body-user" } },
    rpc: {
      procedure: "/memory.v1.MemoryService/CreateSession",
      schema: memoryV1.CreateSessionRequestSchema,
      request: { userId: "body-user" },
    },
  }),
  route({
    name: "GetContext",
    rest: { method: "GET", path: "/api/v1/sessions/s-matrix/context" },
    rpc: {
      procedure: "/memory.v1.MemoryService/GetContext",
      schema: memoryV1.GetContextRequestSchema,
      request: { sessionId: "s-matrix" },
    },
  }),
  route({
    name: "SearchMemory",
    rest: {
      method: "POST",
      path: "/api/v1/sessions/s-matrix/context/search",
      body: { query: "matrix" },
    },
    rpc: {
      procedure: "/memory.v1.MemoryService/SearchMemory",
      schema: memoryV1.SearchMemoryRequestSchema,
      request: { sessionId: "s-matrix", query: "matrix" },
    },
  }),
  route({
    name: "HealthCheck (the API's own, not exempt)",
    rest: { method: "GET", path: "/api/v1/health" },
    rpc: {
      procedure: "/memory.v1.MemoryService/HealthCheck",
      schema: memoryV1.HealthCheckRequestSchema,
      request: {},
    },
  }),
];

const brokerRoutes: Route[] = [
  healthRoute,
  route({
    name: "ListProviders",
    rest: { method: "GET", path: "/providers" },
    rpc: {
      procedure: "/broker.v1.BrokerService/ListProviders",
      schema: brokerV1.ListProvidersRequestSchema,
      request: {},
    },
  }),
  route({
    name: "GetProvider (unknown id)",
    rest: { method: "GET", path: "/providers/p-unknown" },
    rpc: {
      procedure: "/broker.v1.BrokerService/GetProvider",
      schema: brokerV1.GetProviderRequestSchema,
      request: { id: "p-unknown" },
    },
  }),
  route({
    name: "ListConnections",
    rest: { method: "GET", path: "/connections?workspace_id=ws-matrix" },
    rpc: {
      procedure: "/broker.v1.BrokerService/ListConnections",
      schema: brokerV1.ListConnectionsRequestSchema,
      request: { workspaceId: "ws-matrix" },
    },
  }),
];

const gatewayRoutes: Route[] = [
  healthRoute,
  route({
    name: "GetCaptureSchema (exempt)",
    public: true,
    rest: { method: "GET", path: "/v1/capture-schema?provider_id=p-unknown" },
    rpc: {
      procedure: "/gateway.v1.GatewayService/GetCaptureSchema",
      schema: gatewayV1.GetCaptureSchemaRequestSchema,
      request: { providerId: "p-unknown" },
    },
  }),
  route({
    name: "ListConnections",
    rest: { method: "GET", path: "/v1/connections?workspace_id=ws-matrix" },
    rpc: {
      procedure: "/gateway.v1.GatewayService/ListConnections",
      schema: gatewayV1.GatewayService.method.listConnections.input,
      request: { workspaceId: "ws-matrix" },
    },
  }),
  route({
    name: "GetToken (unknown connection)",
    rest: { method: "GET", path: "/v1/token/c-unknown" },
    rpc: {
      procedure: "/gateway.v1.GatewayService/GetToken",
      schema: gatewayV1.GetTokenRequestSchema,
      request: { connectionId: "c-unknown" },
    },
  }),
  route({
    name: "ListAgents",
    rest: { method: "GET", path: "/v1/agents?workspace_id=ws-matrix" },
    rpc: {
      procedure: "/gateway.v1.GatewayService/ListAgents",
      schema: gatewayV1.GatewayService.method.listAgents.input,
      request: { workspaceId: "ws-matrix" },
    },
  }),
];

/** The contract's table read backwards; the transport limits' refusals are RESOURCE_EXHAUSTED. */
function restOutcome(status: number): Code | 0 {
  if (status >= 200 && status < 300) return 0;
  if (status === 413 || status === 431) return Code.ResourceExhausted;
  return codeForHttpStatus(status);
}

/**
 * REST over node:http, whose client sends header values as given (fetch would trim the spaces
 * this matrix is about; HTTP/1 servers strip them, HTTP/2 ones keep them).
 */
function restCall(baseUrl: string, r: Route["rest"], headers: Record<string, string>) {
  return new Promise<number>((resolve, reject) => {
    const body = r.body === undefined ? undefined : JSON.stringify(r.body);
    const request = httpRequest(`${baseUrl}${r.path}`, {
      method: r.method,
      headers: { ...(body ? { "content-type": "application/json" } : {}), ...headers },
    });
    request.on("response", (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
    });
    request.on("error", reject);
    request.end(body);
  });
}

interface H2Answer {
  status: number;
  headers: Record<string, unknown>;
  trailers: Record<string, unknown>;
  body: Buffer;
}

function h2Call(baseUrl: string, headers: Record<string, string>, body: Uint8Array) {
  return new Promise<H2Answer>((resolve, reject) => {
    const session = connectHttp2(baseUrl);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ...headers });
    const answer: H2Answer = { status: 0, headers: {}, trailers: {}, body: Buffer.alloc(0) };
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      answer.status = Number(h[":status"]);
      answer.headers = h;
    });
    stream.on("trailers", (t) => {
      answer.trailers = t;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", () => {});
    stream.on("close", () => {
      session.close();
      answer.body = Buffer.concat(chunks);
      resolve(answer);
    });
    stream.end(body);
  });
}

function envelope(message: Uint8Array): Buffer {
  const framed = Buffer.alloc(5 + message.byteLength);
  framed.writeUInt32BE(message.byteLength, 1);
  framed.set(message, 5);
  return framed;
}

async function grpcCall(baseUrl: string, rpc: Route["rpc"], headers: Record<string, string>) {
  const answer = await h2Call(
    baseUrl,
    { ":path": rpc.procedure, "content-type": "application/grpc", te: "trailers", ...headers },
    envelope(toBinary(rpc.schema, create(rpc.schema, rpc.request))),
  );
  const status = answer.trailers["grpc-status"] ?? answer.headers["grpc-status"];
  return status === undefined ? -answer.status : Number(status);
}

const connectCodes: Record<string, Code> = Object.fromEntries(
  Object.entries(Code)
    .filter(([, value]) => typeof value === "number")
    .map(([name, value]) => [
      name.replace(/[A-Z]/g, (c, i) => (i ? "_" : "") + c.toLowerCase()),
      value as Code,
    ]),
);

async function connectCall(baseUrl: string, rpc: Route["rpc"], headers: Record<string, string>) {
  const answer = await h2Call(
    baseUrl,
    {
      ":path": rpc.procedure,
      "content-type": "application/json",
      "connect-protocol-version": "1",
      ...headers,
    },
    Buffer.from(toJsonString(rpc.schema, create(rpc.schema, rpc.request))),
  );
  if (answer.status === 200) return 0;
  const code = /"code"\s*:\s*"([a-z_]+)"/.exec(answer.body.toString("utf8"))?.[1];
  return code === undefined ? -answer.status : (connectCodes[code] ?? -answer.status);
}

const codeName = (code: number) => (code === 0 ? "OK" : code < 0 ? `HTTP ${-code}` : Code[code]);

/** Codes that say the server failed; no credential case may end in one. */
const serverFailures = new Set<number>([
  Code.Internal,
  Code.Unknown,
  Code.Unavailable,
  Code.DataLoss,
]);

interface Check {
  what: string;
  rest: number;
  other: number;
  expected?: number;
}

let checks: Check[] = [];
/** Padded credentials: REST's outcome and each RPC transport's, asserted apart (see `padded`). */
let paddedChecks: Check[] = [];

async function runMatrix(
  service: string,
  urls: { rest: string; grpc?: string },
  routes: Route[],
  cases: CredentialCase[],
) {
  const grpcUrl = urls.grpc ?? "";
  for (const r of routes) {
    for (const c of cases) {
      const expected = r.public && !c.beforeAuth ? undefined : c.refusal;
      const rest = restOutcome(await restCall(urls.rest, r.rest, c.headers));
      const grpc = await grpcCall(grpcUrl, r.rpc, c.headers);
      const connect = await connectCall(grpcUrl, r.rpc, c.headers);
      for (const [transport, other] of [
        ["gRPC", grpc],
        ["Connect", connect],
      ] as const) {
        const what = `${service} ${r.name} ${transport}: ${c.name}`;
        if (c.padded) {
          // REST reads the key trimmed; the gRPC port never sees it, so refuses it as missing.
          const seenByRpc = r.public ? rest : Code.Unauthenticated;
          paddedChecks.push({ what, rest, other, expected: seenByRpc });
        } else {
          checks.push({ what, rest, other, expected });
        }
      }
    }
  }
}

/** Why a check failed, or undefined when REST and the other transport agree on the expected outcome. */
function disagreement(check: Check): string | undefined {
  const said = `REST ${codeName(check.rest)}, other ${codeName(check.other)}`;
  if (check.rest !== check.other) return `${check.what}: ${said}`;
  if (check.expected !== undefined && check.rest !== check.expected) {
    return `${check.what}: ${said}, expected ${codeName(check.expected)}`;
  }
  if (check.expected === undefined) {
    if (check.rest === Code.Unauthenticated || check.rest === Code.PermissionDenied) {
      return `${check.what}: refused (${said}), expected accepted`;
    }
  }
  if (serverFailures.has(check.rest)) return `${check.what}: server failure (${said})`;
  return undefined;
}

// ---- Services --------------------------------------------------------------------------------

before(async () => {
  [memoryPg, brokerPg] = await Promise.all([createTestPostgres(), createTestPostgres()]).catch(
    () => [undefined, undefined],
  );
  if (!memoryPg || !brokerPg) return;
  writeFileSync(brokerKeyFile, `${brokerFileKey}\n${brokerRevokedKey}\n`);
  writeFileSync(gatewayKeyFile, `${gatewayKey}\n${gatewayRevokedKey}\n`);
  memory = await startMemoryService({
    logger,
    env: {
      DATABASE_URL: memoryPg.url,
      ATRIUM_DATA_DIR: dataDir,
      MEMORY_HOST: "127.0.0.1",
      MEMORY_REST_PORT: "0",
      MEMORY_GRPC_PORT: "0",
      MEMORY_PROMOTER_INTERVAL: "1h",
      ATRIUM_MEMORY_API_KEY: memoryKey,
      ATRIUM_MEMORY_JWT_SECRET: jwtSecret,
      ATRIUM_MEMORY_JWT_AUDIENCE: audience,
      ATRIUM_MEMORY_JWT_ISSUER: issuer,
    },
  });
  broker = await startBrokerService({
    sql: brokerPg.sql,
    logger,
    env: testBrokerEnv({
      API_KEYS: brokerKey,
      API_KEYS_FILE: brokerKeyFile,
      API_KEY_RELOAD_INTERVAL_MS: "100",
    }),
  });
  gateway = await startGatewayService({
    logger,
    env: {
      GATEWAY_HOST: "127.0.0.1",
      GATEWAY_REST_PORT: "0",
      GATEWAY_GRPC_PORT: "0",
      GATEWAY_PUBLIC_URL: "http://127.0.0.1:1",
      BROKER_URL: broker.urls.rest,
      BROKER_GRPC_URL: broker.urls.grpc ?? "",
      BROKER_API_KEY: brokerKey,
      GATEWAY_REQUIRE_API_KEY: "true",
      GATEWAY_API_KEYS_FILE: gatewayKeyFile,
      GATEWAY_API_KEY_RELOAD_INTERVAL: "100ms",
    },
  });
  // Revoke one key of each file while the services run: the reload must drop it on both transports.
  writeFileSync(brokerKeyFile, `${brokerFileKey}\n`);
  writeFileSync(gatewayKeyFile, `${gatewayKey}\n`);
  const revoked = async () =>
    (await restCall(
      broker.urls.rest,
      { method: "GET", path: "/providers" },
      { "x-api-key": brokerRevokedKey },
    )) === 401 &&
    (await restCall(
      gateway.urls.rest,
      { method: "GET", path: "/v1/agents" },
      { "x-api-key": gatewayRevokedKey },
    )) === 403;
  for (let attempt = 0; attempt < 100 && !(await revoked()); attempt++) await sleep(100);
});

after(async () => {
  await Promise.all([gateway?.stop(), memory?.stop()]);
  await broker?.stop();
  await Promise.all([memoryPg?.drop(), brokerPg?.drop()]);
  rmSync(dataDir, { recursive: true, force: true });
});

test("REST, gRPC and Connect give the same answer to every credential case", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  checks = [];
  paddedChecks = [];
  await runMatrix("memory", memory.urls, memoryRoutes, await memoryCases());
  await runMatrix(
    "broker",
    broker.urls,
    brokerRoutes,
    await keyCases({
      key: brokerFileKey,
      revoked: brokerRevokedKey,
      wrongKey: Code.Unauthenticated,
    }),
  );
  await runMatrix(
    "gateway",
    gateway.urls,
    gatewayRoutes,
    await keyCases({
      key: gatewayKey,
      revoked: gatewayRevokedKey,
      wrongKey: Code.PermissionDenied,
    }),
  );
  const failures = checks.map(disagreement).filter((f) => f !== undefined);
  console.log(`auth matrix: ${checks.length} checks, ${checks.length - failures.length} agree`);
  const paddedFailures = paddedChecks
    .map(({ what, rest, other, expected }) => {
      const refusedOnRest = rest === Code.Unauthenticated || rest === Code.PermissionDenied;
      if (refusedOnRest || serverFailures.has(rest)) return `${what}: REST ${codeName(rest)}`;
      return other === expected
        ? undefined
        : `${what}: ${codeName(other)}, expected ${codeName(expected ?? 0)}`;
    })
    .filter((f) => f !== undefined);
  console.log(
    `auth matrix: ${paddedChecks.length} more with a padded credential, accepted on REST and unseen on HTTP/2 (RFC 9113 §8.2.1), ${paddedChecks.length - paddedFailures.length} as stated`,
  );
  assert.ok(checks.length >= 192, `only ${checks.length} checks ran`);
  assert.deepEqual(failures, []);
  assert.deepEqual(paddedFailures, []);
});
