import { request as httpsRequest } from "node:https";
import { Writable } from "node:stream";
import { memoryV1 } from "@atrium/api";
import { createClient, type ServiceImpl } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { type CryptoKey, SignJWT } from "jose";
import { identityKey } from "../auth/identity.js";
import { createLogger } from "../logger/logger.js";
import type { PemPair } from "./test-certificates.js";

/**
 * Test support for the service host: a tiny MemoryService whose CreateSession echoes who the
 * caller is, clients for both transports, JWT minting and captured logs.
 */

export const jwtSecret = "test-jwt-secret-with-at-least-32-bytes!";
export const apiKey = "test-api-key-0123456789";

/** `session_id` is "tenant/user/agent": the JWT identity when there is one, else the body's. */
export const echoIdentity: Partial<ServiceImpl<typeof memoryV1.MemoryService>> = {
  createSession(request, context) {
    const identity = context.values.get(identityKey);
    const who = identity
      ? [identity.tenantId, identity.userId, identity.agentId ?? ""]
      : [request.tenantId, request.userId, request.agentId];
    return { sessionId: who.join("/") };
  },
  getSession() {
    throw new Error("connection to postgres://app:hunter2@db failed");
  },
};

export function capturedLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const logger = createLogger({ name: "test", destination });
  return {
    logger,
    raw: () => lines.join(""),
    entries: () =>
      lines
        .join("")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

export interface Claims {
  tenant_id?: string;
  user_id?: string;
  agent_id?: string;
}

export interface SignOptions {
  secret?: string;
  /** Signs with this private key and algorithm instead of the HS256 secret. */
  privateKey?: { alg: "RS256" | "ES256"; key: CryptoKey; kid?: string };
  audience?: string;
  issuer?: string;
  expiresIn?: string | number;
  omitExp?: boolean;
}

export async function signJwt(claims: Claims, options: SignOptions = {}): Promise<string> {
  const { privateKey } = options;
  const jwt = new SignJWT({ ...claims })
    .setProtectedHeader(
      privateKey ? { alg: privateKey.alg, kid: privateKey.kid } : { alg: "HS256" },
    )
    .setIssuedAt();
  if (!options.omitExp) jwt.setExpirationTime(options.expiresIn ?? "5m");
  if (options.audience) jwt.setAudience(options.audience);
  if (options.issuer) jwt.setIssuer(options.issuer);
  return jwt.sign(privateKey?.key ?? new TextEncoder().encode(options.secret ?? jwtSecret));
}

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");

export function unsignedJwt(claims: Claims): string {
  const exp = Math.floor(Date.now() / 1000) + 300;
  return `${base64url({ alg: "none", typ: "JWT" })}.${base64url({ ...claims, exp })}.`;
}

/** Same signature, different payload: what an attacker editing the tenant would send. */
export function tamperedJwt(token: string, claims: Claims): string {
  const [header, payload, signature] = token.split(".");
  const original = JSON.parse(Buffer.from(payload, "base64url").toString());
  return `${header}.${base64url({ ...original, ...claims })}.${signature}`;
}

export interface RestResponse {
  status: number;
  body: Record<string, unknown> | string;
}

export interface TlsClient {
  ca: string;
  cert?: PemPair;
}

/** Plain HTTP through fetch; HTTPS through node:https, which can present a client certificate. */
export async function restCall(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; tls?: TlsClient } = {},
): Promise<RestResponse> {
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  const headers = { ...(body ? { "content-type": "application/json" } : {}), ...init.headers };
  if (!init.tls) {
    const response = await fetch(url, { method: init.method ?? "GET", headers, body });
    const text = await response.text();
    return { status: response.status, body: parse(text) };
  }
  const tls = init.tls;
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: init.method ?? "GET",
        headers,
        ca: tls.ca,
        cert: tls.cert?.cert,
        key: tls.cert?.key,
        agent: false,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: parse(text) }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function parse(text: string): Record<string, unknown> | string {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * `grpc` is served by the host's direct gRPC path, `connect` (the Connect protocol on the same
 * port) by Connect's router: both must answer the same.
 */
export type RpcProtocol = "grpc" | "connect";

export function memoryClient(baseUrl: string, tls?: TlsClient, protocol: RpcProtocol = "grpc") {
  const nodeOptions = tls ? { ca: tls.ca, cert: tls.cert?.cert, key: tls.cert?.key } : undefined;
  const transport =
    protocol === "grpc"
      ? createGrpcTransport({ baseUrl, nodeOptions })
      : createConnectTransport({ baseUrl, httpVersion: "2", nodeOptions });
  return createClient(memoryV1.MemoryService, transport);
}
