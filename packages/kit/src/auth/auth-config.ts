import { createPublicKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { envBoolean } from "../config/env-values.js";
import { ConfigError, type Env, loadConfig } from "../config/load-config.js";
import type { AuthenticatorOptions } from "./authenticator.js";
import { type JwtOptions, pemAlgorithm } from "./jwt.js";

/** PEM contents for a TLS listener; `requireClientCert` refuses unverified clients at the handshake. */
export interface TlsOptions {
  cert: string;
  key: string;
  ca?: string;
  requireClientCert: boolean;
}

export interface AuthConfig {
  authenticator: AuthenticatorOptions;
  tls?: TlsOptions;
  /** Lines the service logs at warn once at start-up (a weaker posture it was asked for). */
  warnings: string[];
}

/** The variables read for a prefix such as `ATRIUM_MEMORY`. */
export function authEnvNames(prefix: string) {
  return {
    apiKey: `${prefix}_API_KEY`,
    jwtSecret: `${prefix}_JWT_SECRET`,
    jwtPublicKeyFile: `${prefix}_JWT_PUBLIC_KEY_FILE`,
    jwtJwksUrl: `${prefix}_JWT_JWKS_URL`,
    jwtAudience: `${prefix}_JWT_AUDIENCE`,
    jwtIssuer: `${prefix}_JWT_ISSUER`,
    enableTls: `${prefix}_ENABLE_TLS`,
    requireMtls: `${prefix}_REQUIRE_MTLS`,
    certFile: `${prefix}_TLS_CERT_FILE`,
    keyFile: `${prefix}_TLS_KEY_FILE`,
    caFile: `${prefix}_TLS_CA_FILE`,
  };
}

const invalid = (detail: string) => new ConfigError(`invalid configuration: ${detail}`);

function readPem(env: Env, name: string): string {
  const path = env[name];
  if (!path) throw invalid(`${name} is required`);
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw invalid(`${name} cannot be read (${reason}: "${path}")`);
  }
}

type Names = ReturnType<typeof authEnvNames>;

/**
 * At most one key source. An identity provider's key (PEM or JWKS) signs tokens for every
 * application it serves, so audience and issuer are required with it; an HS256 secret belongs to
 * this deployment alone, so without them start-up only warns (tokens minted for a sibling service
 * sharing the secret would be accepted).
 */
function jwtFromEnv(env: Env, names: Names, warnings: string[]): JwtOptions | undefined {
  const sources = [names.jwtSecret, names.jwtPublicKeyFile, names.jwtJwksUrl].filter(
    (name) => env[name],
  );
  const audience = env[names.jwtAudience] || undefined;
  const issuer = env[names.jwtIssuer] || undefined;
  if (sources.length === 0) {
    if (audience || issuer) {
      throw invalid(
        `${audience ? names.jwtAudience : names.jwtIssuer} needs ${names.jwtSecret}, ${names.jwtPublicKeyFile} or ${names.jwtJwksUrl}`,
      );
    }
    return undefined;
  }
  if (sources.length > 1) throw invalid(`set only one of ${sources.join(", ")}`);
  const missing = [
    audience ? undefined : names.jwtAudience,
    issuer ? undefined : names.jwtIssuer,
  ].filter((name) => name !== undefined);
  if (env[names.jwtSecret]) {
    if (missing.length > 0) {
      warnings.push(
        `JWT auth without ${missing.join(" or ")}: any token signed with ${names.jwtSecret} is accepted whatever its ${audience ? "issuer" : issuer ? "audience" : "audience and issuer"}`,
      );
    }
    return { secret: env[names.jwtSecret], audience, issuer };
  }
  if (missing.length > 0) {
    throw invalid(`${missing[0]} is required with ${sources[0]}`);
  }
  if (env[names.jwtJwksUrl]) {
    const url = env[names.jwtJwksUrl] as string;
    if (!/^https?:\/\//.test(url) || !URL.canParse(url)) {
      throw invalid(`${names.jwtJwksUrl} must be an http(s) URL (got "${url}")`);
    }
    return { jwksUrl: url, audience, issuer };
  }
  const publicKey = readPem(env, names.jwtPublicKeyFile);
  try {
    pemAlgorithm(createPublicKey(publicKey));
  } catch {
    throw invalid(`${names.jwtPublicKeyFile} must hold an RSA or P-256 public key in PEM`);
  }
  return { publicKey, audience, issuer };
}

/**
 * Reads a service's auth and TLS switches; everything is off when nothing is set. Certificate
 * files are read here, at start-up, so a wrong path stops the process with one line.
 */
export function authConfigFromEnv(prefix: string, env: Env = process.env): AuthConfig {
  const names = authEnvNames(prefix);
  const switches = loadConfig(
    z.object({
      [names.enableTls]: envBoolean().default(false),
      [names.requireMtls]: envBoolean().default(false),
    }),
    env,
  );
  const enableTls = switches[names.enableTls];
  const requireMtls = switches[names.requireMtls];
  if (requireMtls && !enableTls) {
    throw invalid(`${names.requireMtls}=true needs ${names.enableTls}=true`);
  }
  const warnings: string[] = [];
  const config: AuthConfig = {
    authenticator: {
      apiKey: env[names.apiKey] || undefined,
      jwt: jwtFromEnv(env, names, warnings),
      mtls: requireMtls,
    },
    warnings,
  };
  if (enableTls) {
    if (requireMtls && !env[names.caFile]) {
      throw invalid(`${names.caFile} is required when ${names.requireMtls}=true`);
    }
    config.tls = {
      cert: readPem(env, names.certFile),
      key: readPem(env, names.keyFile),
      ca: env[names.caFile] ? readPem(env, names.caFile) : undefined,
      requireClientCert: requireMtls,
    };
  }
  return config;
}
