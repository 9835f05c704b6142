import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import type { ConnectionToken, CredentialStrategy } from "./gateway-types.js";
import { createGatewayClient } from "./index.js";
import { type LoopbackServer, sendJson, startLoopbackServer } from "./testing/loopback-server.js";

const base: ConnectionToken = {
  connection_id: "",
  auth_type: "api_key",
  status: "active",
  health_status: "healthy",
  access_token: "",
  token_type: "",
  scopes: [],
  id_token: "",
  api_key: "",
  username: "",
  password: "",
  name_id: "",
  attributes: {},
};

const aws = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
};

const tokens: Record<string, Partial<ConnectionToken> & { strategy?: CredentialStrategy }> = {
  oauth: { auth_type: "oauth2", access_token: "access-1", token_type: "Bearer" },
  key: {
    api_key: "k-123",
    strategy: { type: "api_key", header_name: "X-Custom-Key", header_prefix: "Key " },
  },
  basic: { auth_type: "basic_auth", username: "alice", password: "pä:ss" },
  query: { api_key: "q-456", strategy: { type: "query_param", param_name: "token" } },
  hmac: {
    api_key: "hmac-secret",
    strategy: {
      type: "hmac_payload",
      header_name: "X-Hub-Signature-256",
      header_prefix: "sha256=",
    },
  },
  sigv4: {
    auth_type: "basic_auth",
    username: aws.accessKeyId,
    password: aws.secretAccessKey,
    strategy: { type: "aws_sigv4", region: "eu-west-1", service: "execute-api" },
  },
};

describe("createFetcher", () => {
  let gateway: LoopbackServer;
  let upstream: LoopbackServer;
  let oauthGeneration = 1;

  before(async () => {
    gateway = await startLoopbackServer((request, response) => {
      const [, , kind, id] = new URL(request.url, "http://x").pathname.split("/");
      if (kind === "refresh") {
        oauthGeneration += 1;
        return sendJson(response, 200, { connection_id: id, status: "active" });
      }
      const entry =
        id === "oauth"
          ? { ...tokens.oauth, access_token: `access-${oauthGeneration}` }
          : tokens[id];
      sendJson(response, 200, { ...base, connection_id: id, ...entry });
    });
    upstream = await startLoopbackServer((request, response) => {
      // The protected resource only takes the newest OAuth token.
      const auth = request.headers.authorization;
      if (auth?.startsWith("Bearer ") && auth !== `Bearer access-${oauthGeneration}`) {
        return sendJson(response, 401, { error: "invalid_token" });
      }
      sendJson(response, 200, { ok: true });
    });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  const client = () => createGatewayClient({ baseUrl: gateway.url });

  it("oauth2: Bearer token", async () => {
    const response = await client().createFetcher("oauth")(`${upstream.url}/me`);
    assert.equal(response.status, 200);
    assert.equal(
      upstream.requests.at(-1)?.headers.authorization,
      `Bearer access-${oauthGeneration}`,
    );
  });

  it("oauth2: a 401 from the resource refreshes through the gateway and retries once", async () => {
    const fetcher = client().createFetcher("oauth");
    await (await fetcher(`${upstream.url}/me`)).body?.cancel();
    oauthGeneration += 1; // the provider rotated the token behind the cached one
    const response = await fetcher(`${upstream.url}/me`, { method: "POST", body: '{"a":1}' });
    assert.equal(response.status, 200);
    const last = upstream.requests.at(-1);
    assert.equal(last?.headers.authorization, `Bearer access-${oauthGeneration}`);
    assert.equal(last?.body.toString(), '{"a":1}');
    assert.ok(gateway.requests.some((r) => r.url === "/v1/refresh/oauth"));
  });

  it("api_key: the key in the provider's header with its prefix", async () => {
    await client().createFetcher("key")(`${upstream.url}/data`);
    assert.equal(upstream.requests.at(-1)?.headers["x-custom-key"], "Key k-123");
    assert.match(String(upstream.requests.at(-1)?.headers["user-agent"]), /^atrium-sdk\//);
  });

  it("basic_auth: RFC 7617 with UTF-8 credentials", async () => {
    await client().createFetcher("basic")(`${upstream.url}/data`);
    const expected = `Basic ${Buffer.from("alice:pä:ss", "utf8").toString("base64")}`;
    assert.equal(upstream.requests.at(-1)?.headers.authorization, expected);
  });

  it("query_param: the key in the named parameter, other parameters kept", async () => {
    await client().createFetcher("query")(`${upstream.url}/data?page=2`);
    assert.equal(upstream.requests.at(-1)?.url, "/data?page=2&token=q-456");
  });

  it("hmac_payload: HMAC-SHA256 of the exact body bytes", async () => {
    const body = JSON.stringify({ event: "push", n: 1 });
    await client().createFetcher("hmac")(`${upstream.url}/hook`, { method: "POST", body });
    const received = upstream.requests.at(-1);
    const expected = createHmac("sha256", "hmac-secret")
      .update(received?.body ?? "")
      .digest("hex");
    assert.equal(received?.body.toString(), body);
    assert.equal(received?.headers["x-hub-signature-256"], `sha256=${expected}`);
  });

  it("aws_sigv4: a signature the AWS signer recomputes from what the server received", async () => {
    const body = "Action=ListUsers&Version=2010-05-08";
    await client().createFetcher("sigv4")(`${upstream.url}/prod/items?b=2&a=1`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
    });
    const received = upstream.requests.at(-1);
    assert.ok(received);
    const authorization = String(received.headers.authorization);
    assert.match(
      authorization,
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request/,
    );
    const signedNames = /SignedHeaders=([^,]+)/.exec(authorization)?.[1].split(";") ?? [];
    assert.ok(signedNames.includes("host") && signedNames.includes("x-amz-date"));

    // Rebuild the request from the wire and sign it again with the same library and date.
    const url = new URL(received.url, upstream.url);
    const headers: Record<string, string> = {};
    for (const name of signedNames) headers[name] = String(received.headers[name]);
    const amzDate = headers["x-amz-date"];
    const signingDate = new Date(
      `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
    );
    const signer = new SignatureV4({
      credentials: aws,
      region: "eu-west-1",
      service: "execute-api",
      sha256: Sha256,
    });
    const resigned = await signer.sign(
      {
        method: received.method,
        protocol: "http:",
        hostname: url.hostname,
        port: Number(url.port),
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers,
        body: received.body.toString(),
      },
      { signingDate },
    );
    assert.equal(resigned.headers.authorization, authorization);
  });
});
