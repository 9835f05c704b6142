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
    assert.match(problem({ ...valid, url: "http://hooks.example/h" }, true), /url must use https/);
    assert.match(problem({ ...valid, url: "ftp://hooks.example/" }, true), /url must use https/);
    assert.match(problem({ ...valid, url: "hooks.example/x" }), /url must be an absolute/);
    assert.match(problem({ ...valid, url: "https://u:p@hooks.example/" }), /url must not carry/);
  });

  it("refuses IP literals outside the public ranges, loopback only when allowed", () => {
    const nonPublic = /^url must not point at a loopback, private/;
    for (const url of [
      "https://169.254.169.254/latest/meta-data",
      "https://10.0.0.8/h",
      "https://172.20.1.1/h",
      "https://192.168.0.10/h",
      "https://100.64.0.1/h",
      "https://0.0.0.0/h",
      "https://[fd12::1]/h",
      "https://[fe80::1]/h",
      "https://[::ffff:10.0.0.1]/h",
      "https://[::ffff:169.254.169.254]/h",
      "https://2130706433/h",
      "https://0x7f.1/h",
      "https://127.0.0.1/h",
      "https://[::1]/h",
      "https://localhost/h",
      "http://127.0.0.1:9000/h",
    ]) {
      assert.match(problem({ ...valid, url }), nonPublic, url);
    }
    assert.match(problem({ ...valid, url: "http://10.0.0.8/h" }, true), nonPublic);
    assert.match(problem({ ...valid, url: "https://[fc00::5]/h" }, true), nonPublic);
    assert.equal(problem({ ...valid, url: "https://127.0.0.1/h" }, true), "");
    assert.equal(problem({ ...valid, url: "https://93.184.215.14/h" }), "");
    assert.equal(problem({ ...valid, url: "https://[2606:4700::1111]/h" }), "");
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
