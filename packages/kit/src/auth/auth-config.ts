import { readFileSync } from "node:fs";
import { z } from "zod";
import { envBoolean } from "../config/env-values.js";
import { ConfigError, type Env, loadConfig } from "../config/load-config.js";
import type { AuthenticatorOptions } from "./authenticator.js";

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
}

/** The variables read for a prefix such as `ATRIUM_MEMORY`. */
export function authEnvNames(prefix: string) {
  return {
    apiKey: `${prefix}_API_KEY`,
    jwtSecret: `${prefix}_JWT_SECRET`,
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
  const config: AuthConfig = {
    authenticator: {
      apiKey: env[names.apiKey] || undefined,
      jwtSecret: env[names.jwtSecret] || undefined,
      mtls: requireMtls,
    },
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
