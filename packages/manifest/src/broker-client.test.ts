import assert from "node:assert/strict";
import { it } from "node:test";
import { createBrokerClient, errorText } from "./broker-client.js";
import { NumberText } from "./manifest-value.js";

it("describes broker errors with their findings", () => {
  const body = JSON.stringify({
    code: "invalid_argument",
    message: "provider is invalid",
    findings: [{ field: "token_url", message: "is required" }],
  });
  assert.equal(errorText(body), "invalid_argument: provider is invalid (token_url is required)");
  assert.equal(errorText('{"error":"unauthorized"}'), "unauthorized");
  assert.equal(errorText("Bad Gateway"), "Bad Gateway");
});

it("sends exact number text, the key and the User-Agent, and reads camelCase or snake_case", async () => {
  const seen: { url: string; init: RequestInit }[] = [];
  const client = createBrokerClient({
    baseUrl: "http://broker/",
    apiKey: "k",
    fetch: async (url, init) => {
      seen.push({ url: String(url), init: init ?? {} });
      return new Response(
        '{"id":"p1","name":"a","clientSecretFingerprint":"abc","params":{"ratioValue":"1.50"}}',
      );
    },
  });
  const live = await client.updateProvider("p 1", { params: { ratio: new NumberText("1.50") } });
  assert.equal(seen[0].url, "http://broker/providers/p%201");
  assert.equal(seen[0].init.method, "PATCH");
  assert.equal(seen[0].init.body, '{"params":{"ratio":1.50}}');
  const headers = seen[0].init.headers as Record<string, string>;
  assert.equal(headers["X-API-Key"], "k");
  assert.match(headers["User-Agent"], /^atriumctl\/\d+\.\d+\.\d+/);
  assert.deepEqual(live.fields, {
    id: "p1",
    name: "a",
    client_secret_fingerprint: "abc",
    params: { ratioValue: "1.50" },
  });
});
