import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { ConfigError } from "../config/load-config.js";
import { authConfigFromEnv } from "./auth-config.js";

const dir = mkdtempSync(join(tmpdir(), "atrium-auth-config-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const certFile = file("server.crt", "CERT");
const keyFile = file("server.key", "KEY");
const caFile = file("ca.crt", "CA");

function message(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.message;
  }
  assert.fail("expected a ConfigError");
}

test("everything is off by default", () => {
  assert.deepEqual(authConfigFromEnv("ATRIUM_MEMORY", {}), {
    authenticator: { apiKey: undefined, jwt: undefined, mtls: false },
    warnings: [],
  });
});

test("reads the key, the secret and the certificate files for a prefix", () => {
  const config = authConfigFromEnv("ATRIUM_MEMORY", {
    ATRIUM_MEMORY_API_KEY: "key",
    ATRIUM_MEMORY_JWT_SECRET: "secret",
    ATRIUM_MEMORY_ENABLE_TLS: "true",
    ATRIUM_MEMORY_REQUIRE_MTLS: "1",
    ATRIUM_MEMORY_TLS_CERT_FILE: certFile,
    ATRIUM_MEMORY_TLS_KEY_FILE: keyFile,
    ATRIUM_MEMORY_TLS_CA_FILE: caFile,
  });
  assert.deepEqual(config, {
    authenticator: {
      apiKey: "key",
      jwt: { secret: "secret", audience: undefined, issuer: undefined },
      mtls: true,
    },
    tls: { cert: "CERT", key: "KEY", ca: "CA", requireClientCert: true },
    warnings: [
      "JWT auth without ATRIUM_MEMORY_JWT_AUDIENCE or ATRIUM_MEMORY_JWT_ISSUER: any token signed with ATRIUM_MEMORY_JWT_SECRET is accepted whatever its audience and issuer",
    ],
  });
});

test("inconsistent or missing settings stop start-up with one line", () => {
  assert.equal(
    message(() => authConfigFromEnv("P", { P_REQUIRE_MTLS: "true" })),
    "invalid configuration: P_REQUIRE_MTLS=true needs P_ENABLE_TLS=true",
  );
  assert.equal(
    message(() => authConfigFromEnv("P", { P_ENABLE_TLS: "true", P_TLS_KEY_FILE: keyFile })),
    "invalid configuration: P_TLS_CERT_FILE is required",
  );
  assert.equal(
    message(() =>
      authConfigFromEnv("P", {
        P_ENABLE_TLS: "true",
        P_REQUIRE_MTLS: "true",
        P_TLS_CERT_FILE: certFile,
        P_TLS_KEY_FILE: keyFile,
      }),
    ),
    "invalid configuration: P_TLS_CA_FILE is required when P_REQUIRE_MTLS=true",
  );
  assert.equal(
    message(() =>
      authConfigFromEnv("P", {
        P_ENABLE_TLS: "true",
        P_TLS_CERT_FILE: join(dir, "missing.crt"),
        P_TLS_KEY_FILE: keyFile,
      }),
    ),
    `invalid configuration: P_TLS_CERT_FILE cannot be read (ENOENT: "${join(dir, "missing.crt")}")`,
  );
  assert.equal(
    message(() => authConfigFromEnv("P", { P_ENABLE_TLS: "yes" })),
    'invalid configuration: P_ENABLE_TLS must be true, false, 1 or 0 (got "yes")',
  );
});

test("JWT: one key source; audience and issuer required with a PEM or JWKS key", () => {
  const { publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const pem = file("jwt.pem", publicKey.export({ type: "spki", format: "pem" }) as string);
  const claimChecks = { P_JWT_AUDIENCE: "svc", P_JWT_ISSUER: "https://idp.example" };
  assert.deepEqual(authConfigFromEnv("P", { P_JWT_SECRET: "s", ...claimChecks }), {
    authenticator: {
      apiKey: undefined,
      jwt: { secret: "s", audience: "svc", issuer: "https://idp.example" },
      mtls: false,
    },
    warnings: [],
  });
  assert.deepEqual(
    authConfigFromEnv("P", { P_JWT_JWKS_URL: "https://idp.example/jwks", ...claimChecks })
      .authenticator.jwt,
    { jwksUrl: "https://idp.example/jwks", audience: "svc", issuer: "https://idp.example" },
  );
  assert.equal(
    authConfigFromEnv("P", { P_JWT_PUBLIC_KEY_FILE: pem, ...claimChecks }).authenticator.jwt
      ?.publicKey,
    publicKey.export({ type: "spki", format: "pem" }),
  );
  assert.deepEqual(authConfigFromEnv("P", { P_JWT_SECRET: "s", P_JWT_AUDIENCE: "a" }).warnings, [
    "JWT auth without P_JWT_ISSUER: any token signed with P_JWT_SECRET is accepted whatever its issuer",
  ]);
  assert.equal(
    message(() => authConfigFromEnv("P", { P_JWT_JWKS_URL: "https://idp.example/jwks" })),
    "invalid configuration: P_JWT_AUDIENCE is required with P_JWT_JWKS_URL",
  );
  assert.equal(
    message(() => authConfigFromEnv("P", { P_JWT_PUBLIC_KEY_FILE: pem, P_JWT_AUDIENCE: "svc" })),
    "invalid configuration: P_JWT_ISSUER is required with P_JWT_PUBLIC_KEY_FILE",
  );
  assert.equal(
    message(() => authConfigFromEnv("P", { P_JWT_SECRET: "s", P_JWT_JWKS_URL: "https://x" })),
    "invalid configuration: set only one of P_JWT_SECRET, P_JWT_JWKS_URL",
  );
  assert.equal(
    message(() => authConfigFromEnv("P", { P_JWT_AUDIENCE: "svc" })),
    "invalid configuration: P_JWT_AUDIENCE needs P_JWT_SECRET, P_JWT_PUBLIC_KEY_FILE or P_JWT_JWKS_URL",
  );
  assert.equal(
    message(() =>
      authConfigFromEnv("P", { P_JWT_PUBLIC_KEY_FILE: file("bad.pem", "nope"), ...claimChecks }),
    ),
    "invalid configuration: P_JWT_PUBLIC_KEY_FILE must hold an RSA or P-256 public key in PEM",
  );
  assert.equal(
    message(() => authConfigFromEnv("P", { P_JWT_JWKS_URL: "file:///etc/x", ...claimChecks })),
    'invalid configuration: P_JWT_JWKS_URL must be an http(s) URL (got "file:///etc/x")',
  );
});
