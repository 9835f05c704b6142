import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { z } from "zod";
import { envBoolean, envDuration, envPort, envUrl } from "./env-values.js";
import { ConfigError, loadConfig } from "./load-config.js";

const schema = z.object({
  ENCRYPTION_KEY: z.string(),
  PORT: envPort().default(8080),
  DEBUG: envBoolean().default(false),
  DATABASE_URL: envUrl({ protocols: ["postgres", "postgresql"] }).optional(),
  IDLE_TIMEOUT: envDuration().default(300_000),
});

function configErrorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error;
  }
  assert.fail("expected a ConfigError");
}

describe("loadConfig", () => {
  test("parses values and applies defaults, treating empty strings as unset", () => {
    const config = loadConfig(schema, { ENCRYPTION_KEY: "k", PORT: "", DEBUG: "1" });
    assert.deepEqual(config, {
      ENCRYPTION_KEY: "k",
      PORT: 8080,
      DEBUG: true,
      IDLE_TIMEOUT: 300_000,
    });
  });

  test("a missing required variable is one line naming it", () => {
    const error = configErrorOf(() => loadConfig(schema, {}));
    assert.equal(error.message, "invalid configuration: ENCRYPTION_KEY is required");
  });

  test("a malformed value names the variable, the rule and the value", () => {
    const error = configErrorOf(() => loadConfig(schema, { ENCRYPTION_KEY: "k", PORT: "80a" }));
    assert.equal(
      error.message,
      'invalid configuration: PORT must be a port number from 0 to 65535 (got "80a")',
    );
    assert.ok(!error.message.includes("\n"));
  });

  test("never echoes the value of a secret-looking variable", () => {
    const secretSchema = z.object({ BROKER_API_KEY: envUrl() });
    const error = configErrorOf(() => loadConfig(secretSchema, { BROKER_API_KEY: "s3cr3t-value" }));
    assert.equal(error.message, "invalid configuration: BROKER_API_KEY must be an absolute URL");
  });

  test("hides the password of an echoed URL", () => {
    const error = configErrorOf(() =>
      loadConfig(schema, { ENCRYPTION_KEY: "k", DATABASE_URL: "mysql://app:hunter2@db/app" }),
    );
    assert.ok(error.message.startsWith("invalid configuration: DATABASE_URL must be a URL"));
    assert.ok(!error.message.includes("hunter2"));
  });

  test("booleans, durations and URLs", () => {
    const config = loadConfig(schema, {
      ENCRYPTION_KEY: "k",
      DEBUG: "FALSE",
      IDLE_TIMEOUT: "1.5s",
      DATABASE_URL: "postgres://db:5432/app",
    });
    assert.equal(config.DEBUG, false);
    assert.equal(config.IDLE_TIMEOUT, 1500);
    assert.equal(config.DATABASE_URL?.host, "db:5432");
    const bad = configErrorOf(() => loadConfig(schema, { ENCRYPTION_KEY: "k", DEBUG: "yes" }));
    assert.equal(
      bad.message,
      'invalid configuration: DEBUG must be true, false, 1 or 0 (got "yes")',
    );
    const noUnit = configErrorOf(() =>
      loadConfig(schema, { ENCRYPTION_KEY: "k", IDLE_TIMEOUT: "30" }),
    );
    assert.match(noUnit.message, /^invalid configuration: IDLE_TIMEOUT must be a duration/);
  });
});
