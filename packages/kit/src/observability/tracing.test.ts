import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "../config/load-config.js";
import {
  batchSettings,
  DEFAULT_EXPORT_BATCH_SIZE,
  startTracing,
  tracingEnabled,
  tracingRequested,
} from "./tracing.js";

test("traces are off unless an OTLP endpoint is set, and can be switched off", () => {
  assert.equal(tracingRequested({}), false);
  assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }), true);
  assert.equal(
    tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" }),
    true,
  );
  assert.equal(
    tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }),
    false,
  );
  assert.equal(
    tracingRequested({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_TRACES_EXPORTER: "none",
    }),
    false,
  );
});

test("off, nothing starts", async () => {
  assert.equal(await startTracing({ serviceName: "atrium-test", env: {} }), undefined);
  assert.equal(tracingEnabled(), false);
});

test("an OTLP protocol other than HTTP is refused by name", async () => {
  await assert.rejects(
    startTracing({
      serviceName: "atrium-test",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
    }),
    (error: unknown) =>
      error instanceof ConfigError && /OTEL_EXPORTER_OTLP_PROTOCOL/.test(error.message),
  );
  assert.equal(tracingEnabled(), false);
});

test("spans are exported in batches of 128 unless OTEL_BSP_MAX_EXPORT_BATCH_SIZE says otherwise", () => {
  assert.equal(DEFAULT_EXPORT_BATCH_SIZE, 128);
  assert.deepEqual(batchSettings({}), { maxExportBatchSize: 128 });
  // Set, the variable is the SDK's to read (it reads OTEL_BSP_* when no setting is passed).
  assert.deepEqual(batchSettings({ OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "512" }), {});
  // Never more than the queue holds (the SDK would lower it with a warning).
  assert.deepEqual(batchSettings({ OTEL_BSP_MAX_QUEUE_SIZE: "100" }), { maxExportBatchSize: 100 });
  assert.deepEqual(batchSettings({ OTEL_BSP_MAX_QUEUE_SIZE: "4096" }), { maxExportBatchSize: 128 });
  assert.deepEqual(batchSettings({ OTEL_BSP_MAX_QUEUE_SIZE: "x" }), { maxExportBatchSize: 128 });
});
