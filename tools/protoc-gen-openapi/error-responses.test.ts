import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

// biome-ignore lint/suspicious/noExplicitAny: the documents are untyped JSON under test.
const committed = (name: string): any =>
  JSON.parse(readFileSync(new URL(`../../openapi/${name}`, import.meta.url), "utf8"));
const memory = committed("memory.v1.openapi.json");
const broker = committed("broker.v1.openapi.json");
const gateway = committed("gateway.v1.openapi.json");

// biome-ignore lint/suspicious/noExplicitAny: see above.
const statuses = (operation: any) => Object.keys(operation.responses).sort();
// biome-ignore lint/suspicious/noExplicitAny: see above.
const bodySchema = (document: any, operation: any, status: string) => {
  const name = operation.responses[status].$ref.split("/").pop();
  return document.components.responses[name].content["application/json"].schema.$ref;
};

describe("error responses and security in the committed documents", () => {
  it("memory: the contract's errors per operation, Planned ones 501 only", () => {
    const paths = memory.paths;
    assert.deepEqual(statuses(paths["/api/v1/sessions/{session_id}/events"].post), [
      "200",
      "400",
      "401",
      "404",
      "412",
      "413",
      "503",
      "default",
    ]);
    assert.deepEqual(statuses(paths["/api/v1/sessions/{session_id}"].get), [
      "200",
      "400",
      "401",
      "501",
      "503",
      "default",
    ]);
    const unavailable = memory.components.responses.Unavailable;
    assert.ok(unavailable.headers["Retry-After"], "503 documents Retry-After");
  });

  it("memory: API key and JWT in each header form the authenticator reads, or none by default", () => {
    const schemes = memory.components.securitySchemes;
    assert.deepEqual(schemes.ApiKey, { ...schemes.ApiKey, in: "header", name: "X-API-Key" });
    assert.equal(schemes.ApiKeyBearer.scheme, "bearer");
    assert.deepEqual(schemes.JwtToken, { ...schemes.JwtToken, in: "header", name: "X-JWT-Token" });
    assert.equal(schemes.JwtAuthorization.scheme, "JWT");
    assert.deepEqual(memory.security.at(-1), {}, "auth is off by default");
    assert.ok(memory.security.some((s: object) => "ApiKey" in s && "JwtToken" in s));
    assert.match(memory.info.description, /REQUIRE_MTLS/);
  });

  it("broker: the key is always required; token and refresh give the contract's 409 and 410 bodies", () => {
    assert.deepEqual(broker.security, [{ ApiKey: [] }]);
    const token = broker.paths["/connections/{id}/token"].get;
    assert.equal(bodySchema(broker, token, "409"), "#/components/schemas/AttentionRequired");
    assert.equal(bodySchema(broker, token, "410"), "#/components/schemas/ConnectionRevoked");
    assert.deepEqual(broker.components.schemas.AttentionRequired.properties.error.enum, [
      "attention_required",
    ]);
    assert.deepEqual(broker.components.schemas.ConnectionRevoked.required, ["code"]);
    assert.equal(
      bodySchema(broker, broker.paths["/providers"].post, "409"),
      "#/components/schemas/Error",
    );
  });

  it("gateway: the exempt routes take no credentials and never answer 401", () => {
    for (const path of ["/auth/callback", "/v1/capture-schema"]) {
      const operation = gateway.paths[path].get;
      assert.deepEqual(operation.security, [], path);
      assert.equal(operation.responses["401"], undefined, path);
      assert.ok(operation.responses["403"], `${path}: ALLOWED_CIDRS still applies`);
    }
    const token = gateway.paths["/v1/token/{connection_id}"].get;
    assert.equal(token.security, undefined, "the document's security applies");
    assert.ok(token.responses["401"] && token.responses["403"] && token.responses["410"]);
  });

  it("every document names its default server and the SPDX licence", () => {
    for (const [document, port] of [
      [memory, "8080"],
      [broker, "8081"],
      [gateway, "8082"],
    ]) {
      assert.equal(document.info.license.name, "Apache-2.0");
      assert.equal(document.servers[0].variables.port.default, port);
    }
  });
});
