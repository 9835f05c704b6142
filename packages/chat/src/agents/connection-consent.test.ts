import assert from "node:assert/strict";
import { test } from "node:test";
import { type Connection, GatewayError, type StartConnectionInput } from "@atrium/sdk";
import { type ConsentGateway, connectionFor, repairFor } from "./connection-consent.js";

const connection = (id: string, fields: Partial<Connection> = {}): Connection => ({
  id,
  workspace_id: "ws-1",
  provider_id: "slack",
  provider_name: "Slack",
  auth_type: "oauth2",
  status: "active",
  health_status: "healthy",
  scopes: [],
  subject: "",
  created_at: "2026-11-01T00:00:00Z",
  ...fields,
});

/** A gateway with these connections, where only `slack` and `github` can start a consent. */
function gatewayWith(connections: Connection[], startError?: GatewayError) {
  const started: StartConnectionInput[] = [];
  const gateway: ConsentGateway = {
    async listConnections(scope) {
      return connections.filter((c) => c.workspace_id === scope?.workspaceId);
    },
    async getConnection(id) {
      const found = connections.find((c) => c.id === id);
      if (!found) throw new GatewayError(404, { code: "NotFound" });
      return found;
    },
    async startConnection(input) {
      started.push(input);
      if (startError) throw startError;
      if (!["slack", "github"].includes(input.provider_id)) {
        throw new GatewayError(404, { code: "NotFound", message: "provider not found" });
      }
      return {
        authorization_url: `https://idp.example/authorize?state=s-${input.provider_id}`,
        state: `s-${input.provider_id}`,
        expires_at: "2026-11-27T02:00:00Z",
      };
    },
  };
  return { gateway, started };
}

const need = { provider: "slack", workspaceId: "ws-1", purpose: "send this message" };

test("the newest active connection of the provider in the workspace is used, no consent asked", async () => {
  const { gateway, started } = gatewayWith([
    connection("old"),
    connection("new", { created_at: "2026-11-02T00:00:00Z" }),
    connection("broken", { created_at: "2026-11-03T00:00:00Z", status: "attention" }),
    connection("other-provider", { created_at: "2026-11-04T00:00:00Z", provider_id: "github" }),
    connection("other-workspace", { created_at: "2026-11-05T00:00:00Z", workspace_id: "ws-2" }),
  ]);
  assert.deepEqual(await connectionFor(gateway, need), { connectionId: "new" });
  assert.equal(started.length, 0);
});

test("without an active connection the step gets a consent item with the gateway's URL", async () => {
  const { gateway, started } = gatewayWith([connection("broken", { status: "attention" })]);
  const answer = await connectionFor(gateway, need);
  assert.ok("pending" in answer);
  const { detail, ...fields } = answer.pending as { detail: string };
  assert.deepEqual(fields, {
    kind: "consent",
    provider: "slack",
    authorization_url: "https://idp.example/authorize?state=s-slack",
  });
  assert.deepEqual(Object.keys(answer.pending).sort(), [
    "authorization_url",
    "detail",
    "kind",
    "provider",
  ]);
  assert.match(detail, /no active connection to provider slack to send this message/);
  assert.match(detail, /goes on by itself/);
  // The consent is asked in the step's workspace, through the gateway's one connect flow.
  assert.deepEqual(started, [{ provider_id: "slack", workspace_id: "ws-1" }]);
});

test("an unknown provider, one that cannot start a consent, or no workspace is a credentials item", async () => {
  const unknown = await connectionFor(gatewayWith([]).gateway, { ...need, provider: "nope" });
  assert.ok("pending" in unknown);
  assert.equal(unknown.pending.kind, "credentials");
  assert.match(
    unknown.pending.detail,
    /provider nope is not registered with the credential broker/,
  );

  const notOauth = await connectionFor(
    gatewayWith([], new GatewayError(400, { error: "provider p is not an oauth2 provider" }))
      .gateway,
    need,
  );
  assert.ok("pending" in notOauth);
  assert.equal(notOauth.pending.kind, "credentials");
  assert.match(notOauth.pending.detail, /cannot start a consent for provider slack \(HTTP 400/);

  const { gateway, started } = gatewayWith([connection("c1")]);
  const noWorkspace = await connectionFor(gateway, { ...need, workspaceId: undefined });
  assert.ok("pending" in noWorkspace);
  assert.equal(noWorkspace.pending.kind, "credentials");
  assert.match(noWorkspace.pending.detail, /set context\.workspace_id/);
  assert.equal(started.length, 0);
});

test("a gateway that fails is an error of the step, not a pending item", async () => {
  const { gateway } = gatewayWith([], new GatewayError(503, { error: "broker unavailable" }));
  await assert.rejects(connectionFor(gateway, need), (error: unknown) => {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.status, 503);
    return true;
  });
});

test("a named connection that needs a new consent asks it for its own provider", async () => {
  const { gateway, started } = gatewayWith([
    connection("stuck", { provider_id: "github", status: "attention" }),
  ]);
  const why = "connection stuck needs a human to redo the consent";
  const item = await repairFor(gateway, "stuck", { workspaceId: "ws-1" }, why);
  assert.equal(item.kind, "consent");
  assert.equal(item.kind === "consent" && item.provider, "github");
  assert.match(item.detail, /^connection stuck needs a human to redo the consent: open/);
  assert.deepEqual(started, [{ provider_id: "github", workspace_id: "ws-1" }]);

  // A connection the gateway does not know, with no provider named, can only be reported.
  const missing = await repairFor(gateway, "gone", { workspaceId: "ws-1" }, "gone is missing");
  assert.deepEqual(missing, { kind: "credentials", detail: "gone is missing" });
  // With the request's provider, it asks for that one.
  const named = await repairFor(gateway, "gone", { provider: "slack", workspaceId: "ws-1" }, "x");
  assert.equal(named.kind, "consent");
});
