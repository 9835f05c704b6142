import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SignJWT } from "jose";
import { AuthenticationError } from "./authentication-error.js";
import { authEnabled, createAuthenticator } from "./authenticator.js";

const secret = "unit-test-secret-unit-test-secret";
const sign = (claims: Record<string, unknown>) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setExpirationTime("1m")
    .sign(new TextEncoder().encode(secret));

async function rejection(promise: Promise<unknown>): Promise<AuthenticationError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AuthenticationError);
    return error;
  }
  assert.fail("expected a rejection");
}

describe("createAuthenticator", () => {
  test("with nothing enabled, every request passes without identity", async () => {
    const auth = createAuthenticator({});
    assert.equal(authEnabled({}), false);
    const identity = await auth.authenticate({
      headers: new Headers(),
      clientCertificateVerified: false,
    });
    assert.equal(identity, undefined);
  });

  test("checks run in the order mTLS, API key, JWT and name the mechanism", async () => {
    const auth = createAuthenticator({ mtls: true, apiKey: "k", jwt: { secret } });
    const nothing = { headers: new Headers(), clientCertificateVerified: false };
    assert.equal((await rejection(auth.authenticate(nothing))).mechanism, "mtls");
    const certOnly = { ...nothing, clientCertificateVerified: true };
    assert.equal((await rejection(auth.authenticate(certOnly))).mechanism, "api_key");
    const withKey = { ...certOnly, headers: new Headers({ "x-api-key": "k" }) };
    assert.equal((await rejection(auth.authenticate(withKey))).mechanism, "jwt");
    const token = await sign({ tenant_id: "t", user_id: "u", agent_id: "a" });
    const all = { ...certOnly, headers: new Headers({ "x-api-key": "k", "x-jwt-token": token }) };
    assert.deepEqual(await auth.authenticate(all), { tenantId: "t", userId: "u", agentId: "a" });
  });

  test("an API key of another length is refused without throwing from the comparison", async () => {
    const auth = createAuthenticator({ apiKey: "a-rather-long-shared-key" });
    for (const presented of ["x", "a-rather-long-shared-key-plus-more", ""]) {
      const headers = new Headers({ authorization: `Bearer ${presented}` });
      const error = await rejection(
        auth.authenticate({ headers, clientCertificateVerified: false }),
      );
      assert.equal(error.mechanism, "api_key");
      assert.ok(!error.message.includes(presented || "\u0000"));
    }
  });

  test("claims of the wrong type are refused", async () => {
    const auth = createAuthenticator({ jwt: { secret } });
    for (const claims of [
      { tenant_id: 1, user_id: "u" },
      { tenant_id: "t", user_id: "" },
      { tenant_id: "t", user_id: "u", agent_id: 7 },
    ]) {
      const headers = new Headers({ authorization: `JWT ${await sign(claims)}` });
      const error = await rejection(
        auth.authenticate({ headers, clientCertificateVerified: true }),
      );
      assert.equal(error.code, 16);
    }
  });
});
