import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import type { Connection } from "@atrium/sdk";
import type { KernelInput, KernelOutput } from "../kernel/kernel-types.js";
import type { ConsentItem } from "../kernel/pending-item.js";
import { createTraceBus } from "../trace/trace-bus.js";
import { createConsentWatch } from "./consent-watch.js";
import { createRunManager } from "./run-manager.js";

const consentItem: ConsentItem = {
  kind: "consent",
  provider: "slack",
  authorization_url: "https://idp.example/authorize?state=s1",
  detail: "there is no active connection to provider slack to send this message",
};

/** Two hosts over one run store, their kernels yielding for a consent, then sending. */
async function twoHosts(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), "consent-watch-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const bus = createTraceBus({ tracesDir: dir });
  t.after(() => bus.close());
  const resumes: KernelInput[] = [];
  const execute = async (input: KernelInput): Promise<KernelOutput> => {
    if (!input.resume) {
      return {
        status: "yield",
        summary: "Draft ready, but there is no connection",
        metadata: { pending: [consentItem], checkpoint: { at: 0 } },
      };
    }
    resumes.push(input);
    return { status: "success", summary: "Sent", metadata: {} };
  };
  const managers = [0, 1].map(() =>
    createRunManager({ kernel: { traceBus: bus, execute }, store: bus.store.runs }),
  );
  t.after(() => Promise.all(managers.map((m) => m.close())));
  let connections: Connection[] = [];
  const gateway = {
    async listConnections(scope?: { workspaceId?: string }) {
      return connections.filter((c) => c.workspace_id === scope?.workspaceId);
    },
  };
  const watches = managers.map((manager) => createConsentWatch({ manager, gateway }));
  const yielded = async (
    stepId: string,
    context: Record<string, unknown> = { workspace_id: "ws-1" },
  ) => {
    const { done } = await managers[0].start({
      workflowId: `wf_${stepId}`,
      stepId,
      request: { message: "tell the team", agent_id: "chat", system_prompt: "", context },
      onBusy: "reject",
    });
    const result = await done;
    assert.equal(result.run.status, "yielded");
    return result.run;
  };
  const connect = (fields: Partial<Connection> = {}) => {
    const connection: Connection = {
      id: `conn_${connections.length + 1}`,
      workspace_id: "ws-1",
      provider_id: "slack",
      provider_name: "Slack",
      auth_type: "oauth2",
      status: "active",
      health_status: "healthy",
      scopes: [],
      subject: "",
      created_at: new Date().toISOString(),
      ...fields,
    };
    connections = [...connections, connection];
    return connection;
  };
  return { bus, managers, watches, resumes, yielded, connect };
}

test("a step waiting for a consent resumes once, on one of two hosts, when the connection is active", async (t) => {
  const { bus, managers, watches, resumes, yielded, connect } = await twoHosts(t);
  const run = await yielded("s1");
  assert.deepEqual(run.response?.pending, [consentItem]);

  // Nothing to resume with: no connection, one of another provider, one not active, one in
  // another workspace, one made well before the step paused.
  connect({ provider_id: "github" });
  connect({ status: "attention" });
  connect({ workspace_id: "ws-2" });
  connect({ created_at: new Date(Date.now() - 3_600_000).toISOString() });
  assert.deepEqual(await Promise.all(watches.map((w) => w.check())), [0, 0]);
  assert.equal((await managers[1].get("wf_s1", "s1"))?.status, "yielded");

  const made = connect();
  // Both hosts see it at once: exactly one resumes the step, the other's claim is refused.
  const counts = await Promise.all(watches.map((w) => w.check()));
  assert.deepEqual(counts.sort(), [0, 1]);
  for (let i = 0; i < 100 && (await managers[0].get("wf_s1", "s1"))?.status !== "completed"; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal((await managers[0].get("wf_s1", "s1"))?.status, "completed");
  assert.equal(resumes.length, 1);
  assert.equal(resumes[0].context.connection_id, made.id);
  assert.equal(resumes[0].context.workspace_id, "ws-1");

  // A later check, a stale trigger for the answered pause, finds nothing to do.
  assert.deepEqual(await Promise.all(watches.map((w) => w.check())), [0, 0]);
  assert.equal(resumes.length, 1);
  const phases = (await bus.history("wf_s1", "s1"))
    .filter((e) => e.type === "thinking")
    .map((e) => e.data.phase);
  assert.deepEqual(
    phases.filter((p) => p === "pause" || p === "resume"),
    ["pause", "resume"],
  );
});

test("a step that names no workspace, or that a person resumed first, is left alone", async (t) => {
  const { managers, watches, resumes, yielded, connect } = await twoHosts(t);
  await yielded("s2", {});
  const answered = await yielded("s3");
  // The person supplies a connection by hand before the watch looks.
  const { done } = await managers[1].resume("wf_s3", "s3", {
    pause: answered.pauses,
    connection_id: "by-hand",
  });
  await done;
  connect();
  assert.equal(await watches[0].check(), 0);
  assert.equal((await managers[0].get("wf_s2", "s2"))?.status, "yielded");
  assert.deepEqual(
    resumes.map((r) => r.context.connection_id),
    ["by-hand"],
  );
});

test("the watch resumes by itself while started, and stops looking once stopped", async (t) => {
  const { managers, resumes, yielded, connect } = await twoHosts(t);
  const errors: unknown[] = [];
  const gateway = {
    async listConnections() {
      return [connect()];
    },
  };
  const watch = createConsentWatch({
    manager: managers[1],
    gateway,
    intervalMs: 20,
    onError: (error) => errors.push(error),
  });
  await yielded("s4");
  watch.start();
  t.after(() => watch.stop());
  for (let i = 0; i < 200 && resumes.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(resumes.length, 1);
  await watch.stop();
  await yielded("s5");
  await new Promise((r) => setTimeout(r, 100));
  assert.equal((await managers[0].get("wf_s5", "s5"))?.status, "yielded");
  assert.deepEqual(errors, []);
});
