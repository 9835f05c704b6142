import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { ConfigError } from "@atrium/kit";
import { loadBrokerConfig } from "./broker-config.js";

describe("loadBrokerConfig", () => {
  const key = randomBytes(32);
  const base = {
    ENCRYPTION_KEY: key.toString("hex"),
    STATE_KEY: "s".repeat(32),
    API_KEYS: "k1,k2",
  };

  it("reads defaults and the spec's variables", () => {
    const config = loadBrokerConfig(base);
    assert.deepEqual(config.encryptionKey, key);
    assert.deepEqual(config.apiKeys, ["k1", "k2"]);
    assert.equal(config.restPort, 8081);
    assert.equal(config.grpcPort, 9091);
    assert.equal(config.secretBackend, "internal");
    assert.equal(config.autoMigrate, true);
  });

  it("names the missing or malformed variable without echoing key material", () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ ...base, ENCRYPTION_KEY: "" }, /^invalid configuration: ENCRYPTION_KEY is required/],
      [
        { ...base, ENCRYPTION_KEY: "c2hvcnQta2V5" },
        /^invalid configuration: ENCRYPTION_KEY must be 32 bytes/,
      ],
      [{ ...base, STATE_KEY: "" }, /^invalid configuration: STATE_KEY is required/],
      [
        { ...base, STATE_KEY: "too-short-state-key" },
        /^invalid configuration: STATE_KEY must be at least 32/,
      ],
      [{ ...base, API_KEYS: "" }, /^invalid configuration: API_KEYS is required/],
      [
        { ...base, SECRET_BACKEND: "vault" },
        /^invalid configuration: SECRET_BACKEND must be internal or gcp/,
      ],
      [{ ...base, SECRET_BACKEND: "gcp" }, /^invalid configuration: GCP_PROJECT is required/],
      [{ ...base, ALLOWED_CIDRS: "10.0.0.0/99" }, /^invalid configuration: ALLOWED_CIDRS /],
      [
        { ...base, BROKER_REST_PORT: "http" },
        /^invalid configuration: BROKER_REST_PORT must be a port number/,
      ],
    ];
    for (const [env, message] of cases) {
      assert.throws(
        () => loadBrokerConfig(env),
        (error: Error) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, message);
          assert.equal(error.message.split("\n").length, 1);
          for (const secret of [env.ENCRYPTION_KEY, env.STATE_KEY]) {
            if (secret) assert.ok(!error.message.includes(secret));
          }
          return true;
        },
      );
    }
  });

  it("serves gRPC under an IP allowlist; BROKER_GRPC_ENABLED=false turns it off", () => {
    assert.equal(loadBrokerConfig({ ...base, ALLOWED_CIDRS: "10.0.0.0/8" }).grpcPort, 9091);
    assert.equal(loadBrokerConfig({ ...base, BROKER_GRPC_ENABLED: "false" }).grpcPort, undefined);
  });

  it("accepts API key files instead of API_KEYS", () => {
    const config = loadBrokerConfig({ ...base, API_KEYS: "", API_KEYS_FILE: "/run/keys" });
    assert.deepEqual(config.apiKeyFiles, ["/run/keys"]);
  });
});
