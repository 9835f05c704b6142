import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { needsServer } from "@atrium/kit/testing";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { startBrokerOnTestPostgres } from "../testing/test-broker.js";

const clientId = "id-token-client";
const kid = "signing-key";

/**
 * An issuer whose token endpoint answers with whatever id_token the test mints, signed with jose
 * under the key its JWKS publishes (or another one, for the bad-signature case).
 */
async function startIssuer() {
  const signing = await generateKeyPair("RS256");
  const impostor = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(signing.publicKey)), kid, alg: "RS256", use: "sig" };
  let idToken = "";
  const server = createServer((req, res) => {
    req.resume();
    const path = new URL(req.url ?? "/", issuer).pathname;
    res.setHeader("content-type", "application/json");
    if (path === "/.well-known/openid-configuration") {
      res.end(
        JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          id_token_signing_alg_values_supported: ["RS256"],
        }),
      );
    } else if (path === "/jwks") {
      res.end(JSON.stringify({ keys: [jwk] }));
    } else if (path === "/token") {
      res.end(
        JSON.stringify({
          access_token: "issued-access-token",
          token_type: "Bearer",
          expires_in: 3600,
          id_token: idToken,
        }),
      );
    } else {
      res.statusCode = 404;
      res.end("{}");
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const now = () => Math.floor(Date.now() / 1000);
  return {
    issuer,
    /** The id_token of the next code exchange: valid for `nonce` unless `change` says otherwise. */
    async answerWith(
      nonce: string,
      change: { claims?: JWTPayload; impostorKey?: boolean } = {},
    ): Promise<void> {
      idToken = await new SignJWT({
        iss: issuer,
        aud: clientId,
        sub: "user-7",
        nonce,
        iat: now(),
        exp: now() + 300,
        ...change.claims,
      })
        .setProtectedHeader({ alg: "RS256", kid })
        .sign(change.impostorKey ? impostor.privateKey : signing.privateKey);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

test("id_tokens with a bad signature, nonce, aud, iss or expiry fail the callback and create nothing", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { broker, pg } = await startBrokerOnTestPostgres(t);
  const idp = await startIssuer();
  t.after(() => idp.close());
  const provider = await broker.call("POST", "/providers", {
    name: "jose-idp",
    auth_type: "oauth2",
    client_id: clientId,
    client_secret: "jose-idp-secret",
    issuer: idp.issuer,
    scopes: ["openid"],
  });
  assert.equal(provider.status, 200, JSON.stringify(provider.body));

  /** One authorization round trip; the provider's answer is minted for the flow's nonce. */
  async function callback(change?: Parameters<typeof idp.answerWith>[1]) {
    const started = await broker.call("POST", "/oauth/start", {
      provider_id: provider.body.id,
      workspace_id: "ws-1",
      return_url: "http://localhost:3000/done",
    });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const authorization = new URL(String(started.body.authorization_url));
    await idp.answerWith(authorization.searchParams.get("nonce") ?? "", change);
    const query = new URLSearchParams({
      code: "authorization-code",
      state: authorization.searchParams.get("state") ?? "",
    });
    return broker.call("GET", `/oauth/callback?${query}`);
  }
  const connections = async () =>
    Number(
      (await pg.sql.query<{ n: string }>("SELECT count(*) AS n FROM broker_connections")).rows[0].n,
    );
  const exchangeFailures = async () =>
    (await broker.call("GET", "/audit?event_type=token.exchange_failed&limit=500")).body.events as {
      data: Record<string, unknown>;
    }[];

  const past = Math.floor(Date.now() / 1000) - 3600;
  const cases: [string, Parameters<typeof idp.answerWith>[1]][] = [
    ["bad signature", { impostorKey: true }],
    ["wrong nonce", { claims: { nonce: "someone-elses-nonce" } }],
    ["wrong aud", { claims: { aud: "another-client" } }],
    ["wrong iss", { claims: { iss: "https://evil.example.com" } }],
    ["expired", { claims: { iat: past - 300, exp: past } }],
  ];
  for (const [name, change] of cases) {
    const before = (await exchangeFailures()).length;
    const result = await callback(change);
    assert.equal(result.status, 400, `${name}: ${JSON.stringify(result.body)}`);
    assert.equal(result.body.code, "InvalidArgument", name);
    assert.equal(await connections(), 0, `${name}: no connection is created`);
    const failures = await exchangeFailures();
    assert.equal(failures.length, before + 1, `${name}: token.exchange_failed is audited`);
    assert.deepEqual(
      failures[0].data,
      { provider_id: provider.body.id, workspace_id: "ws-1", error: "invalid_id_token" },
      name,
    );
  }
  assert.equal((await broker.call("GET", "/audit?event_type=connection.created")).body.total, 0);

  // The same harness with a valid id_token connects, so each rejection above was the token's.
  const accepted = await callback();
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  assert.equal((accepted.body.connection as { subject: string }).subject, "user-7");
  assert.equal(await connections(), 1);
});
