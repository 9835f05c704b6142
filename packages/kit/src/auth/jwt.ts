import { createPublicKey, type KeyObject } from "node:crypto";
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import { unsafeStringReason } from "../server/input-rule.js";
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

/**
 * Surrounding whitespace is no part of a header value: HTTP/1 strips it before anyone sees it and
 * HTTP/2 keeps it, so the token is read the same way on both only if it is trimmed here.
 */
function presentedToken(headers: Headers): string | undefined {
  const header = headers.get("x-jwt-token")?.trim();
  if (header) return header;
  const match = /^JWT\s+(\S+)$/i.exec(headers.get("authorization")?.trim() ?? "");
  return match?.[1];
}

/**
 * An identity claim, under the input rule every stored value follows: the tenant and user ids
 * reach PostgreSQL, which refused a NUL in a validly signed token's claim with a 500.
 */
function identityClaim(payload: JWTPayload, claim: string): string {
  const value = payload[claim];
  if (typeof value !== "string" || value === "") {
    throw new AuthenticationError("jwt", `JWT lacks claim ${claim}`);
  }
  const problem = unsafeStringReason(value);
  if (problem) throw new AuthenticationError("jwt", `JWT claim ${claim} ${problem}`);
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
      tenantId: identityClaim(payload, "tenant_id"),
      userId: identityClaim(payload, "user_id"),
    };
    if (payload.agent_id !== undefined) {
      if (typeof payload.agent_id !== "string") throw new AuthenticationError("jwt", "invalid JWT");
      const problem = unsafeStringReason(payload.agent_id);
      if (problem) throw new AuthenticationError("jwt", `JWT claim agent_id ${problem}`);
      identity.agentId = payload.agent_id;
    }
    return identity;
  };
}
