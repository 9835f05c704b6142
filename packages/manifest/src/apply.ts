import type { BrokerClient } from "./broker-client.js";
import { isRecord, type ManifestRecord } from "./manifest-value.js";
import type { PlannedChange } from "./plan.js";
import type { WebhookChange } from "./webhook-plan.js";
import { runPool } from "./worker-pool.js";

export interface ApplyFailure {
  kind: "provider" | "webhook";
  /** The provider's name, or `webhook <name>`. */
  name: string;
  action: PlannedChange["action"];
  reason: string;
}

type Task = Omit<ApplyFailure, "reason"> & { run(): Promise<unknown> };

export interface ApplyOptions {
  client: BrokerClient;
  concurrency: number;
  onProgress?: (done: number, total: number) => void;
}

/** Reconciles every change; one provider or webhook failing never stops the others. */
export async function applyPlan(
  changes: PlannedChange[],
  options: ApplyOptions,
  webhookChanges: WebhookChange[] = [],
): Promise<ApplyFailure[]> {
  const { client } = options;
  const tasks: Task[] = [
    ...changes.map((change) => ({
      kind: "provider" as const,
      name: change.name,
      action: change.action,
      run: () =>
        change.action === "create"
          ? client.createProvider(withoutNulls(change.provider.fields))
          : change.action === "update"
            ? client.updateProvider(change.id, change.body)
            : client.deleteProvider(change.id),
    })),
    ...webhookChanges.map((change) => ({
      kind: "webhook" as const,
      name: `webhook ${change.name}`,
      action: change.action,
      run: () =>
        change.action === "create"
          ? client.createWebhook(withoutNulls(change.webhook.fields))
          : change.action === "update"
            ? client.updateWebhook(change.id, change.body)
            : client.deleteWebhook(change.id),
    })),
  ];
  let done = 0;
  const outcomes = await runPool(tasks, options.concurrency, async (task) => {
    try {
      await task.run();
      return null;
    } catch (error) {
      const { kind, name, action } = task;
      return { kind, name, action, reason: (error as Error).message };
    } finally {
      done++;
      options.onProgress?.(done, tasks.length);
    }
  });
  return outcomes.filter((o): o is ApplyFailure => o !== null);
}

function withoutNulls(fields: ManifestRecord): ManifestRecord {
  return Object.fromEntries(
    Object.entries(fields).filter(
      ([, value]) => value !== null && !(isRecord(value) && Object.keys(value).length === 0),
    ),
  );
}
