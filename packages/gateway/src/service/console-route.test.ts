import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createLogger } from "@atrium/kit";
import { type GatewayService, startGatewayService } from "../index.js";
import { brokerScript } from "../testing/broker-script.js";
import { type ScriptedBroker, startScriptedBroker } from "../testing/scripted-broker.js";

// Needs the bundled console (`make build` runs `npm run build -w @atrium/console`).
describe("gateway /console", () => {
  let broker: ScriptedBroker;
  let gateway: GatewayService;
  before(async () => {
    broker = await startScriptedBroker(brokerScript());
    gateway = await startGatewayService({
      env: {
        GATEWAY_HOST: "127.0.0.1",
        GATEWAY_REST_PORT: "0",
        GATEWAY_GRPC_PORT: "0",
        BROKER_URL: broker.restUrl,
        BROKER_GRPC_URL: broker.grpcUrl,
        BROKER_API_KEY: "broker-key",
        GATEWAY_REQUIRE_API_KEY: "true",
        GATEWAY_API_KEYS: "operator-key",
      },
      logger: createLogger({ name: "console-test", level: "silent" }),
    });
  });
  after(async () => {
    await gateway.stop();
    await broker.stop();
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${gateway.urls.rest}${path}`, { headers, redirect: "manual" });

  it("serves the app without a key, under a CSP that allows no inline script and no framing", async () => {
    const page = await get("/console/");
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    const html = await page.text();
    assert.match(html, /<script type="module" src="app.js"><\/script>/);
    const csp = page.headers.get("content-security-policy") ?? "";
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self';/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(page.headers.get("x-content-type-options"), "nosniff");

    const script = await get("/console/app.js");
    assert.equal(script.status, 200);
    assert.match(script.headers.get("content-type") ?? "", /javascript/);
    assert.match(script.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
  });

  it("has an icon: the page names it, and /favicon.ico leads to it", async () => {
    assert.match(await (await get("/console/")).text(), /<link rel="icon" href="favicon.svg"/);
    const root = await get("/favicon.ico");
    assert.equal(root.status, 301);
    assert.equal(root.headers.get("location"), "/console/favicon.svg");
    const icon = await get("/console/favicon.svg");
    assert.equal(icon.status, 200);
    assert.match(icon.headers.get("content-type") ?? "", /^image\/svg\+xml/);
  });

  it("redirects /console to /console/ so relative asset paths resolve", async () => {
    const response = await get("/console");
    assert.ok([301, 302].includes(response.status), String(response.status));
    assert.equal(response.headers.get("location"), "/console/");
  });

  it("keeps the API behind the key the console sends", async () => {
    assert.equal((await get("/v1/connections")).status, 401);
    const answered = await get("/v1/connections", { "x-api-key": "operator-key" });
    assert.equal(answered.status, 200);
    assert.equal(answered.headers.get("content-security-policy"), null);
  });

  it("answers 404 for a file the console does not have", async () => {
    assert.equal((await get("/console/missing.js")).status, 404);
  });
});
