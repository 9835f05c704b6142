import { createPublicKey, type KeyObject } from "node:crypto";
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import { AuthenticationError } from "./authentication-error.js";
import type { Identity } from "./identity.js";

/** Exactly one key source: an HS256 secret, a PEM public key, or an identity provider's JWKS. */
export interface JwtOptions {
  /** HS256 shared secret. */
  secret?: string;
  /** PEM public key or certificate; RS256 for an RSA key, ES256 for a P-256 key. */
  publicKey?: string;
  /** JWKS URL of an identity provider; RS256 and ES256 keys, chosen by `kid`. */
  jwksUrl?: string;
  /** When set, `aud` must contain it. */
  audience?: string;
  /** When set, `iss` must equal it. */
  issuer?: string;
}

function presentedToken(headers: Headers): string | undefined {
  const header = headers.get("x-jwt-token");
  if (header) return header.trim();
  const match = /^JWT\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
  return match?.[1];
}

function requiredString(payload: JWTPayload, claim: string): string {
  const value = payload[claim];
  if (typeof value !== "string" || value === "") {
    throw new AuthenticationError("jwt", `JWT lacks claim ${claim}`);
  }
  return value;
}

function rejection(error: unknown): AuthenticationError {
  if (error instanceof AuthenticationError) return error;
  if (error instanceof errors.JWTExpired) return new AuthenticationError("jwt", "JWT expired");
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === "missing") {
      return new AuthenticationError("jwt", `JWT lacks claim ${error.claim}`);
    }
    if (error.claim === "aud") return new AuthenticationError("jwt", "JWT audience not accepted");
    if (error.claim === "iss") return new AuthenticationError("jwt", "JWT issuer not accepted");
  }
  return new AuthenticationError("jwt", "invalid JWT");
}

/** The algorithm a PEM key can verify; anything else is a configuration mistake. */
export function pemAlgorithm(key: KeyObject): "RS256" | "ES256" {
  if (key.asymmetricKeyType === "rsa") return "RS256";
  if (key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1") {
    return "ES256";
  }
  throw new Error(`unsupported JWT public key type ${key.asymmetricKeyType ?? "unknown"}`);
}

type Verifier = { key: JWTVerifyGetKey; algorithms: string[] };

function verifierFor(options: JwtOptions): Verifier {
  if (options.secret) {
    const secret = new TextEncoder().encode(options.secret);
    return { key: async () => secret, algorithms: ["HS256"] };
  }
  if (options.publicKey) {
    const key = createPublicKey(options.publicKey);
    return { key: async () => key, algorithms: [pemAlgorithm(key)] };
  }
  if (options.jwksUrl) {
    return { key: createRemoteJWKSet(new URL(options.jwksUrl)), algorithms: ["RS256", "ES256"] };
  }
  throw new Error("JWT auth needs a secret, a public key or a JWKS URL");
}

/** Checks a presented token's signature, algorithm, `exp`, and `aud`/`iss` when configured. */
export type JwtVerifier = (token: string) => Promise<JWTPayload>;

/**
 * The one JWT verification: the algorithms are fixed by the key source (so `alg: none` and
 * HS256-with-a-public-key confusion are refused), `exp` is required, `aud` and `iss` are checked
 * when configured. Failures are AuthenticationErrors whose message says which rule failed.
 */
export function createJwtVerifier(options: JwtOptions): JwtVerifier {
  const { key, algorithms } = verifierFor(options);
  const verifyOptions = {
    algorithms,
    requiredClaims: ["exp"],
    audience: options.audience,
    issuer: options.issuer,
  };
  return async (token) => {
    try {
      return (await jwtVerify(token, key, verifyOptions)).payload;
    } catch (error) {
      throw rejection(error);
    }
  };
}

/**
 * Verifies `X-JWT-Token: T` or `Authorization: JWT T` with the one configured key source; the
 * identity claims are `tenant_id`, `user_id` (required) and `agent_id` (optional).
 */
export function createJwtCheck(options: JwtOptions): (headers: Headers) => Promise<Identity> {
  const verify = createJwtVerifier(options);
  return async (headers) => {
    const token = presentedToken(headers);
    if (token === undefined) throw new AuthenticationError("jwt", "missing JWT");
    const payload = await verify(token);
    const identity: Identity = {
      tenantId: requiredString(payload, "tenant_id"),
      userId: requiredString(payload, "user_id"),
    };
    if (payload.agent_id !== undefined) {
      if (typeof payload.agent_id !== "string") throw new AuthenticationError("jwt", "invalid JWT");
      identity.agentId = payload.agent_id;
    }
    return identity;
  };
}
