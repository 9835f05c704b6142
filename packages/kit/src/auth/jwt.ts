import { errors, type JWTPayload, jwtVerify } from "jose";
import { AuthenticationError } from "./authentication-error.js";
import type { Identity } from "./identity.js";

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
  if (error instanceof errors.JWTClaimValidationFailed && error.reason === "missing") {
    return new AuthenticationError("jwt", `JWT lacks claim ${error.claim}`);
  }
  return new AuthenticationError("jwt", "invalid JWT");
}

/**
 * Verifies `X-JWT-Token: T` or `Authorization: JWT T`: HS256 only (so `alg: none` and key
 * confusion are refused), `exp` required, and the identity claims `tenant_id`, `user_id`
 * (required) and `agent_id` (optional).
 */
export function createJwtCheck(secret: string): (headers: Headers) => Promise<Identity> {
  const key = new TextEncoder().encode(secret);
  return async (headers) => {
    const token = presentedToken(headers);
    if (token === undefined) throw new AuthenticationError("jwt", "missing JWT");
    try {
      const { payload } = await jwtVerify(token, key, {
        algorithms: ["HS256"],
        requiredClaims: ["exp"],
      });
      const identity: Identity = {
        tenantId: requiredString(payload, "tenant_id"),
        userId: requiredString(payload, "user_id"),
      };
      if (payload.agent_id !== undefined) {
        if (typeof payload.agent_id !== "string")
          throw new AuthenticationError("jwt", "invalid JWT");
        identity.agentId = payload.agent_id;
      }
      return identity;
    } catch (error) {
      throw rejection(error);
    }
  };
}
