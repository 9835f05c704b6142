import assert from "node:assert/strict";
import { test } from "node:test";
import { type AtriumError, type AuthRequest, Code, createApiKeySet } from "@atrium/kit";
import { mcpOAuthChecksItself } from "../mcp/mcp-route.js";
import { consolePaths } from "../service/console-route.js";
import { createGatewayKeyCheck } from "./key-guard.js";

const keys = createApiKeySet({ keys: ["the-key"], files: [], reloadMs: 60_000 });
let checks = 0;
const check = createGatewayKeyCheck({
  keys: {
    ...keys,
    check(presented) {
      checks++;
      return keys.check(presented);
    },
  },
  openPaths: consolePaths,
  checkedElsewhere: mcpOAuthChecksItself,
});

/** "open" when the request passes without a key looked at, else the refusal's code. */
async function verdict(request: Partial<AuthRequest>, headers: Record<string, string> = {}) {
  const before = checks;
  try {
    await check.authenticate({
      headers: new Headers(headers),
      clientCertificateVerified: false,
      ...request,
    });
    return checks === before ? "open" : "ok";
  } catch (error) {
    return Code[(error as AtriumError).code];
  }
}

const rest = (method: string, path: string, procedure?: string) => ({ method, path, procedure });
const service = "/gateway.v1.GatewayService";

test("the exempt RPCs are open on gRPC and on their REST routes; the others need a key", async () => {
  for (const name of ["CompleteAuthorization", "GetCaptureSchema", "CaptureCredential"]) {
    assert.equal(await verdict({ procedure: `${service}/${name}` }), "open", name);
  }
  assert.equal(
    await verdict(rest("GET", "/v1/capture-schema", `${service}/GetCaptureSchema`)),
    "open",
  );
  assert.equal(await verdict({ procedure: `${service}/GetToken` }), "Unauthenticated");
  assert.equal(
    await verdict(rest("GET", "/v1/token/c-1", `${service}/GetToken`), { "x-api-key": "nope" }),
    "PermissionDenied",
  );
  assert.equal(
    await verdict({ procedure: `${service}/GetToken` }, { "x-api-key": "the-key" }),
    "ok",
  );
});

test("the console's files and CORS preflights are open; other paths are not", async () => {
  assert.equal(await verdict(rest("GET", "/console/index.html")), "open");
  assert.equal(await verdict(rest("GET", "/favicon.ico")), "open");
  assert.equal(await verdict(rest("GET", "/consoles")), "Unauthenticated");
  assert.equal(
    await verdict(rest("OPTIONS", "/v1/token/c-1"), { "access-control-request-method": "GET" }),
    "open",
  );
  assert.equal(await verdict(rest("OPTIONS", "/v1/token/c-1")), "Unauthenticated");
  assert.equal(await verdict(rest("GET", "/v1/operator/users")), "Unauthenticated");
});

test("with MCP OAuth, /mcp's Bearer tokens and missing credentials are the route's; a key is checked here", async () => {
  assert.equal(await verdict(rest("GET", "/.well-known/oauth-protected-resource/mcp")), "open");
  assert.equal(await verdict(rest("POST", "/mcp")), "open");
  assert.equal(
    await verdict(rest("POST", "/mcp"), { authorization: "Bearer t", "x-api-key": "nope" }),
    "open",
  );
  assert.equal(await verdict(rest("POST", "/mcp"), { "x-api-key": "nope" }), "PermissionDenied");
  assert.equal(await verdict(rest("POST", "/mcp"), { "x-api-key": "the-key" }), "ok");
});
