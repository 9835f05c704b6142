import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import {
  AtriumHttpError,
  AttentionRequiredError,
  ConnectionNotActiveError,
  ConnectionRevokedError,
  createChatClient,
  createGatewayClient,
  createMemoryClient,
  type EventType,
  GatewayError,
} from "@atrium/sdk";
import { type SdkServices, startSdkServices } from "./sdk-services-harness.js";

/**
 * The cases of sdks/conformance/services.json through the TypeScript SDK, against the services the
 * Python and Go suites use, so the three SDKs answer alike.
 */
interface Step {
  call: string;
  // biome-ignore lint/suspicious/noExplicitAny: wire fields of any call
  args: Record<string, any>;
  save?: string;
  expect: { result?: unknown; length?: number; error?: string; status?: number; body?: unknown };
}

const { cases } = JSON.parse(
  readFileSync(new URL("../sdks/conformance/services.json", import.meta.url), "utf8"),
) as { cases: { name: string; steps: Step[] }[] };

const errorClasses: Record<string, unknown> = {
  AtriumError: AtriumHttpError,
  GatewayError,
  AttentionRequired: AttentionRequiredError,
  ConnectionRevoked: ConnectionRevokedError,
  ConnectionNotActive: ConnectionNotActiveError,
};

let services: SdkServices;
before(async () => {
  services = await startSdkServices();
});
after(() => services?.stop());

function resolve(value: unknown, names: Record<string, unknown>): unknown {
  if (typeof value === "string" && value.startsWith("$")) {
    return value
      .slice(1)
      .split(".")
      .reduce<unknown>((found, part) => (found as Record<string, unknown>)[part], names);
  }
  if (Array.isArray(value)) return value.map((item) => resolve(item, names));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, names)]));
  }
  return value;
}

/** Why `actual` lacks the fields of `expected`, or undefined when it has them all. */
function lacks(actual: unknown, expected: unknown, path: string): string | undefined {
  if (expected === "<any>") {
    return actual === undefined || actual === null || actual === ""
      ? `${path} is empty`
      : undefined;
  }
  if (expected === "<none>") {
    return actual === undefined || actual === null || actual === ""
      ? undefined
      : `${path} is ${JSON.stringify(actual)}, want none`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      return `${path} is ${JSON.stringify(actual)}, want ${expected.length} items`;
    }
    for (const [i, item] of expected.entries()) {
      const problem = lacks(actual[i], item, `${path}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (typeof expected === "object" && expected !== null) {
    if (typeof actual !== "object" || actual === null) return `${path} is not an object`;
    for (const [key, item] of Object.entries(expected)) {
      const problem = lacks((actual as Record<string, unknown>)[key], item, `${path}.${key}`);
      if (problem) return problem;
    }
    return undefined;
  }
  return actual === expected
    ? undefined
    : `${path} is ${JSON.stringify(actual)}, want ${JSON.stringify(expected)}`;
}

function methods() {
  const { urls } = services;
  const gateway = createGatewayClient({ baseUrl: urls.gateway, apiKey: urls.gateway_api_key });
  const memory = createMemoryClient({ baseUrl: urls.memory });
  const chat = createChatClient({ baseUrl: urls.chat });
  const scope = (a: Step["args"]) => ({ workspaceId: a.workspace_id });
  const calls: Record<string, (a: Step["args"]) => Promise<unknown>> = {
    "gateway.capture_credential": (a) => gateway.captureCredential(a as never),
    "gateway.get_capture_schema": (a) => gateway.getCaptureSchema(a.provider_id),
    "gateway.get_token": (a) => gateway.getToken(a.connection_id, scope(a)),
    "gateway.refresh_connection": (a) => gateway.refreshConnection(a.connection_id, scope(a)),
    "gateway.revoke_connection": (a) =>
      gateway.revokeConnection(a.connection_id, { ...scope(a), reason: a.reason }),
    "gateway.get_connection": (a) => gateway.getConnection(a.connection_id, scope(a)),
    "gateway.list_connections": (a) => gateway.listConnections(scope(a)),
    "gateway.start_connection": (a) => gateway.startConnection(a as never),
    "gateway.create_agent": (a) => gateway.createAgent(a as never),
    "gateway.get_agent": (a) => gateway.getAgent(a.agent_id, scope(a)),
    "gateway.list_agents": (a) => gateway.listAgents(a.workspace_id),
    "gateway.disable_agent": (a) => gateway.disableAgent(a.agent_id, scope(a)),
    "gateway.create_agent_session": (a) => gateway.createAgentSession(a as never),
    "gateway.get_agent_session": (a) => gateway.getAgentSession(a.session_id),
    "gateway.create_webhook": (a) => gateway.createWebhook(a as never),
    "gateway.list_webhooks": () => gateway.listWebhooks(),
    "gateway.get_webhook": (a) => gateway.getWebhook(a.webhook_id),
    "gateway.update_webhook": ({ webhook_id, ...a }) => gateway.updateWebhook(webhook_id, a),
    "gateway.delete_webhook": (a) => gateway.deleteWebhook(a.webhook_id),
    "gateway.list_webhook_deliveries": ({ webhook_id, ...a }) =>
      gateway.listWebhookDeliveries(webhook_id, a),
    "gateway.rotate_webhook_secret": (a) =>
      gateway.rotateWebhookSecret(a.webhook_id, { overlapSeconds: a.overlap_seconds }),
    "gateway.redeliver_webhook": (a) => gateway.redeliverWebhook(a.webhook_id, a.delivery_id),
    "memory.create_session": (a) => memory.createSession(a as never),
    "memory.store_interaction": ({ session_id, ...a }) =>
      memory.storeInteraction(session_id, a as never),
    "memory.store_event": ({ session_id, ...a }) =>
      memory.storeEvent(session_id, { ...a, type: a.type as EventType }),
    "memory.get_context": ({ session_id, ...a }) => memory.getContext(session_id, a),
    "chat.send": (a) => chat.send(a as never),
    "chat.history": (a) => chat.history(a.workflow_id, a.step_id),
  };
  return calls;
}

for (const c of cases) {
  test(`services conformance: ${c.name}`, async () => {
    const calls = methods();
    const names: Record<string, unknown> = { ...services.urls };
    for (const step of c.steps) {
      const args = resolve(step.args ?? {}, names) as Step["args"];
      const expect = resolve(step.expect, names) as Step["expect"];
      const where = `${step.call} ${JSON.stringify(args)}`;
      let result: unknown;
      try {
        result = await calls[step.call](args);
      } catch (error) {
        assert.ok(error instanceof AtriumHttpError, `${where}: ${error}`);
        assert.ok(expect.error, `${where}: unexpected ${error} ${JSON.stringify(error.body)}`);
        assert.equal(error.constructor, errorClasses[expect.error], `${where}: ${error.name}`);
        assert.equal(error.status, expect.status, where);
        assert.equal(lacks(error.body, expect.body ?? {}, "body"), undefined, where);
        continue;
      }
      assert.equal(expect.error, undefined, `${where}: got ${JSON.stringify(result)}`);
      if (expect.length !== undefined) assert.equal((result as unknown[]).length, expect.length);
      if (expect.result !== undefined) {
        assert.equal(lacks(result, expect.result, "result"), undefined, where);
      }
      if (step.save) names[step.save] = result;
    }
  });
}
