import assert from "node:assert/strict";
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
    authenticator: { apiKey: undefined, jwtSecret: undefined, mtls: false },
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
    authenticator: { apiKey: "key", jwtSecret: "secret", mtls: true },
    tls: { cert: "CERT", key: "KEY", ca: "CA", requireClientCert: true },
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
