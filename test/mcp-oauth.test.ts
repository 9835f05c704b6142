import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { needsServer, serverAvailable } from "@atrium/kit/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { type McpStack, startMcpStack } from "./mcp-e2e-harness.js";

/**
 * /mcp as an OAuth protected resource of an external authorization server: the metadata a client
 * discovers the issuer from, the challenge, Bearer tokens verified against the issuer's JWKS with
 * this resource as audience, scopes by subject, and API keys still working beside them.
 */
const issuer = "https://idp.atrium.test";
const resource = "https://mcp.atrium.test/mcp";
const signing = await generateKeyPair("ES256");
const stranger = await generateKeyPair("ES256");
let jwks: Server;
let stack: McpStack;
const clients: Client[] = [];

before(async () => {
  // The broker needs PostgreSQL (the tests below skip without it, and fail in CI).
  if (!(await serverAvailable("postgres"))) return;
  const published = {
    keys: [{ ...(await exportJWK(signing.publicKey)), kid: "k1", alg: "ES256" }],
  };
  jwks = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(published));
  });
  await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
  const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`;
  stack = await startMcpStack({
    gatewayEnv: {
      GATEWAY_MCP_OAUTH_ISSUER: issuer,
      GATEWAY_MCP_OAUTH_JWKS_URL: jwksUrl,
      GATEWAY_MCP_RESOURCE: resource,
    },
    extraScopes: [
      // The same memory scope as alice's key, reached by her identity at the issuer.
      {
        subject: "idp|alice",
        tenant_id: "acme",
        user_id: "alice",
        agent_id: "desk",
        workspace_id: "ws-a",
      },
      {
        subject: "idp|bob",
        tenant_id: "acme",
        user_id: "bob",
        agent_id: "desk",
        workspace_id: "ws-b",
      },
    ],
  });
});

after(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await stack?.stop();
  jwks?.close();
});

const token = (
  claims: JWTPayload,
  options: { key?: typeof signing.privateKey; expires?: string } = {},
) =>
  new SignJWT({ aud: resource, iss: issuer, ...claims })
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setIssuedAt()
    .setExpirationTime(options.expires ?? "5m")
    .sign(options.key ?? signing.privateKey);

async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: "oauth-client", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.gatewayUrl}/mcp`), {
      requestInit: { headers },
    }),
  );
  clients.push(client);
  return client;
}

const post = (headers: Record<string, string>) =>
  fetch(`${stack.gatewayUrl}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });

const text = (result: unknown) =>
  (result as CallToolResult).content.map((c) => ("text" in c ? c.text : "")).join("");

test("the protected resource metadata names the issuer, without a key", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  for (const path of [
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-protected-resource",
  ]) {
    const res = await fetch(`${stack.gatewayUrl}${path}`);
    assert.equal(res.status, 200, path);
    const metadata = (await res.json()) as Record<string, unknown>;
    assert.equal(metadata.resource, resource);
    assert.deepEqual(metadata.authorization_servers, [issuer]);
    assert.deepEqual(metadata.bearer_methods_supported, ["header"]);
  }
});

test("no credential: 401 with a challenge pointing at the metadata", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const res = await post({});
  assert.equal(res.status, 401);
  assert.equal(
    res.headers.get("www-authenticate"),
    'Bearer resource_metadata="https://mcp.atrium.test/.well-known/oauth-protected-resource/mcp"',
  );
});

test("a token's subject is its scope: memory is the user's, never another's", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const alice = await connect({ authorization: `Bearer ${await token({ sub: "idp|alice" })}` });
  const bob = await connect({ authorization: `Bearer ${await token({ sub: "idp|bob" })}` });
  const note = "OAuth alice keeps her passport in the blue drawer";
  const stored = await alice.callTool({ name: "remember", arguments: { note } });
  assert.ok(!stored.isError, text(stored));
  // Her API key reaches the same memory scope; bob's token does not.
  const viaKey = await connect({ "x-api-key": stack.keys.alice });
  assert.match(text(await viaKey.callTool({ name: "context", arguments: {} })), /blue drawer/);
  assert.doesNotMatch(text(await bob.callTool({ name: "context", arguments: {} })), /blue drawer/);
});

test("credentialed calls work for a token holder, inside its workspace only", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const connectionId = await stack.connect("ws-a");
  const alice = await connect({ authorization: `Bearer ${await token({ sub: "idp|alice" })}` });
  const answer = await alice.callTool({
    name: "http_request",
    arguments: { connection_id: connectionId, url: "/me" },
  });
  assert.ok(!answer.isError, text(answer));
  assert.equal((answer.structuredContent as { status: number }).status, 200);
  const bob = await connect({ authorization: `Bearer ${await token({ sub: "idp|bob" })}` });
  const refused = await bob.callTool({
    name: "http_request",
    arguments: { connection_id: connectionId, url: "/me" },
  });
  assert.ok(refused.isError);
});

test("wrong audience, issuer or key, expired, tampered, or a subject without scope are refused", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const good = await token({ sub: "idp|alice" });
  const [header, payload, signature] = good.split(".");
  const forged = Buffer.from(
    JSON.stringify({ ...JSON.parse(Buffer.from(payload, "base64url").toString()), sub: "idp|bob" }),
  ).toString("base64url");
  const cases: [string, string, number, RegExp][] = [
    [
      "other audience",
      await token({ sub: "idp|alice", aud: "https://other.example/mcp" }),
      401,
      /invalid_token/,
    ],
    [
      "other issuer",
      await token({ sub: "idp|alice", iss: "https://evil.example" }),
      401,
      /invalid_token/,
    ],
    [
      "other key",
      await token({ sub: "idp|alice" }, { key: stranger.privateKey }),
      401,
      /invalid_token/,
    ],
    ["expired", await token({ sub: "idp|alice" }, { expires: "-1m" }), 401, /invalid_token/],
    ["tampered", `${header}.${forged}.${signature}`, 401, /invalid_token/],
    ["no sub", await token({}), 401, /invalid_token/],
    ["no scope", await token({ sub: "idp|mallory" }), 403, /insufficient_scope/],
  ];
  for (const [name, bearer, status, challenge] of cases) {
    const res = await post({ authorization: `Bearer ${bearer}` });
    assert.equal(res.status, status, name);
    assert.match(res.headers.get("www-authenticate") ?? "", challenge, name);
  }
});

test("API keys keep their rules beside OAuth: wrong 403, valid without scope 403", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  assert.equal((await post({ "x-api-key": "not-a-key" })).status, 403);
  assert.equal((await post({ "x-api-key": stack.keys.unscoped })).status, 403);
  assert.equal((await post({ "x-api-key": stack.keys.alice })).status, 200);
});
