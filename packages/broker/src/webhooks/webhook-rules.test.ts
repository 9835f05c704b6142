import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { validateWebhookFields, type WebhookFields } from "./webhook-rules.js";

const valid: WebhookFields = {
  name: "ops",
  url: "https://hooks.example/atrium",
  event_types: ["connection.revoked"],
};

const problem = (fields: WebhookFields, allowHttpLoopback = false) => {
  try {
    validateWebhookFields(fields, { allowHttpLoopback }, true);
    return "";
  } catch (error) {
    return (error as Error).message;
  }
};

describe("webhook rules", () => {
  it("accepts https anywhere and http only on loopback when allowed", () => {
    assert.equal(problem(valid), "");
    assert.equal(problem({ ...valid, url: "http://127.0.0.1:9000/h" }, true), "");
    assert.equal(problem({ ...valid, url: "http://[::1]:9000/h" }, true), "");
    assert.equal(problem({ ...valid, url: "http://localhost/h" }, true), "");
    assert.match(problem({ ...valid, url: "http://127.0.0.1:9000/h" }), /^.*url must use https/);
    assert.match(problem({ ...valid, url: "http://10.0.0.8/h" }, true), /url must use https/);
    assert.match(problem({ ...valid, url: "ftp://hooks.example/" }, true), /url must use https/);
    assert.match(problem({ ...valid, url: "hooks.example/x" }), /url must be an absolute/);
    assert.match(problem({ ...valid, url: "https://u:p@hooks.example/" }), /url must not carry/);
  });

  it("names the field that is missing or wrong", () => {
    assert.match(problem({ ...valid, url: undefined }), /url /);
    assert.match(problem({ ...valid, name: "Ops Team" }), /name must/);
    assert.match(problem({ ...valid, event_types: [] }), /event_types must name/);
    assert.match(
      problem({ ...valid, event_types: ["connection.revoked", "connection.exploded"] }),
      /event_types has unknown "connection.exploded"/,
    );
    assert.match(problem({ ...valid, secret: "hunter2" }), /secret must be whsec_/);
    assert.match(problem({ ...valid, description: "x".repeat(1001) }), /description must/);
  });

  it("checks only the fields an update sends", () => {
    assert.doesNotThrow(() =>
      validateWebhookFields({ enabled: false }, { allowHttpLoopback: false }, false),
    );
    assert.throws(
      () => validateWebhookFields({ url: "http://x.example" }, { allowHttpLoopback: false }, false),
      /url must use https/,
    );
  });
});
