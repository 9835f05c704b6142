import assert from "node:assert/strict";
import { test } from "node:test";
import { memoryV1 } from "@atrium/api";
import { createAuthenticator } from "../auth/authenticator.js";
import {
  apiKey,
  capturedLogger,
  echoIdentity,
  jwtSecret,
  memoryClient,
  restCall,
  signJwt,
} from "./service-host.fixtures.js";
import { createServiceHost } from "./service-host.js";

test("no credential reaches the log, whatever the transport or outcome", async (t) => {
  const logs = capturedLogger();
  const host = createServiceHost({
    name: "broker",
    logger: logs.logger,
    rest: { host: "127.0.0.1", port: 0 },
    grpc: { host: "127.0.0.1", port: 0 },
    services: [{ service: memoryV1.MemoryService, implementation: echoIdentity }],
    authenticator: createAuthenticator({ apiKey, jwt: { secret: jwtSecret } }),
    // A handler careless enough to log its whole input.
    configureRest: (app) => {
      app.post("/oauth/exchange", async (request) => {
        request.log.info({ body: request.body }, "exchange requested");
        return { ok: true };
      });
    },
  });
  const { restUrl, grpcUrl } = await host.start();
  t.after(() => host.stop());

  const jwt = await signJwt({ tenant_id: "t", user_id: "u" });
  const clientSecret = "client-secret-c1a2b3";
  const refreshToken = "refresh-token-r4d5e6";
  const cookie = "session-cookie-s7f8";
  const wrongKey = "wrong-api-key-w9x0";
  const body = {
    client_id: "app",
    client_secret: clientSecret,
    grant: { refresh_token: refreshToken, tenant: { password: "pw-nested-p1q2" } },
  };

  const exchanged = await restCall(`${restUrl}/oauth/exchange`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "x-jwt-token": jwt, cookie: `sid=${cookie}` },
    body,
  });
  assert.equal(exchanged.status, 200);
  const created = await restCall(`${restUrl}/api/v1/sessions`, {
    method: "POST",
    headers: { "x-api-key": apiKey, authorization: `JWT ${jwt}` },
    body: { user_id: "u", metadata: { client_secret: clientSecret } },
  });
  assert.equal(created.status, 200);
  const rejected = await restCall(`${restUrl}/oauth/exchange`, {
    method: "POST",
    headers: { "x-api-key": wrongKey, "x-jwt-token": jwt },
    body,
  });
  assert.equal(rejected.status, 401);
  await memoryClient(grpcUrl!).createSession(
    { userId: "u" },
    { headers: { authorization: `Bearer ${apiKey}`, "x-jwt-token": jwt } },
  );
  await assert.rejects(
    memoryClient(grpcUrl!).createSession({}, { headers: { "x-api-key": wrongKey } }),
  );

  const raw = logs.raw();
  const entries = logs.entries();
  assert.ok(
    entries.some((e) => e.msg === "exchange requested"),
    "the body was logged",
  );
  assert.ok(entries.filter((e) => e.msg === "request completed").length >= 3);
  assert.ok(entries.some((e) => e.msg === "rpc completed"));
  assert.ok(raw.includes("[redacted]"));
  const signature = jwt.split(".")[2];
  for (const secret of [
    apiKey,
    jwt,
    signature,
    clientSecret,
    refreshToken,
    "pw-nested-p1q2",
    cookie,
    wrongKey,
  ]) {
    assert.ok(!raw.includes(secret), `log output contains ${secret}`);
  }
});
