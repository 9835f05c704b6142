import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { needsServer } from "@atrium/kit/testing";
import { startBrokerOnTestPostgres } from "../testing/test-broker.js";

test("agents: validation, lifecycle, sessions only for enabled agents, audit", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { broker, pg } = await startBrokerOnTestPostgres(t);

  const invalid = await broker.call("POST", "/agents", {
    name: " padded",
    description: "x".repeat(1001),
  });
  assert.equal(invalid.status, 400);
  assert.match(String(invalid.body.message), /workspace_id is required/);
  assert.match(String(invalid.body.message), /whitespace/);
  assert.match(String(invalid.body.message), /description is longer than 1000/);
  assert.equal((await broker.call("GET", "/agents")).status, 400);

  const input = { workspace_id: "ws", name: "planner", metadata: { team: "ops" } };
  const created = await broker.call("POST", "/agents", input);
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const id = String(created.body.id);
  assert.deepEqual(created.body.metadata, { team: "ops" });
  assert.equal(created.body.disabled_at, undefined);
  assert.equal((await broker.call("POST", "/agents", input)).status, 409);
  await broker.call("POST", "/agents", { workspace_id: "other", name: "planner" });
  const listed = await broker.call("GET", "/agents?workspace_id=ws");
  assert.deepEqual(
    (listed.body.agents as { id: string }[]).map((a) => a.id),
    [id],
  );
  assert.deepEqual((await broker.call("GET", `/agents/${id}`)).body, created.body);
  assert.equal((await broker.call("GET", `/agents/${id}?workspace_id=other`)).status, 404);

  const connectionId = randomUUID();
  await pg.sql.query(
    `INSERT INTO broker_providers (id, name, auth_type) VALUES ('p', 'keyed', 'api_key')`,
  );
  await pg.sql.query(
    `INSERT INTO broker_connections (id, workspace_id, provider_id, auth_type, status)
     VALUES ($1, 'ws', 'p', 'api_key', 'active')`,
    [connectionId],
  );
  const open = (agentId: string) =>
    broker.call("POST", "/agent-sessions", { agent_id: agentId, connection_id: connectionId });
  assert.equal((await open("caller-chosen")).status, 404, "an unregistered agent id");
  const foreign = await broker.call("POST", "/agents", { workspace_id: "ws-2", name: "x" });
  assert.equal((await open(String(foreign.body.id))).status, 404, "another workspace's agent");
  const session = await open(id);
  assert.equal(session.status, 200, JSON.stringify(session.body));
  assert.equal(session.body.status, "open");

  const disabled = await broker.call("DELETE", `/agents/${id}`);
  assert.equal(disabled.status, 200, JSON.stringify(disabled.body));
  assert.ok(disabled.body.disabled_at);
  const again = await broker.call("DELETE", `/agents/${id}`);
  assert.deepEqual(again.body, disabled.body, "a repeat returns the agent unchanged");
  const closed = await broker.call("GET", `/agent-sessions/${session.body.id}`);
  assert.equal(closed.body.status, "closed");
  assert.equal(closed.body.close_reason, "agent_disabled");
  const refused = await open(id);
  assert.equal(refused.status, 412);
  assert.match(String(refused.body.message), /disabled/);
  // The name is free again once its agent is disabled.
  assert.equal((await broker.call("POST", "/agents", input)).status, 200);

  const audit = await broker.call("GET", `/audit?resource_id=${id}`);
  const events = audit.body.events as { event_type: string; data: Record<string, unknown> }[];
  assert.deepEqual(
    events.map((e) => e.event_type),
    ["agent.disabled", "agent.created"],
  );
  assert.equal(events[0].data.sessions_closed, 1);
  assert.equal(events[1].data.name, "planner");
});
