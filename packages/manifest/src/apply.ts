import type { BrokerClient } from "./broker-client.js";
import { isRecord, type ManifestRecord } from "./manifest-value.js";
import type { PlannedChange } from "./plan.js";
import { runPool } from "./worker-pool.js";

export interface ApplyFailure {
  name: string;
  action: PlannedChange["action"];
  reason: string;
}

export interface ApplyOptions {
  client: BrokerClient;
  concurrency: number;
  onProgress?: (done: number, total: number) => void;
}

/** Reconciles every change; one provider failing never stops the others. */
export async function applyPlan(
  changes: PlannedChange[],
  options: ApplyOptions,
): Promise<ApplyFailure[]> {
  let done = 0;
  const outcomes = await runPool(changes, options.concurrency, async (change) => {
    try {
      await applyChange(change, options.client);
      return null;
    } catch (error) {
      return { name: change.name, action: change.action, reason: (error as Error).message };
    } finally {
      done++;
      options.onProgress?.(done, changes.length);
    }
  });
  return outcomes.filter((o): o is ApplyFailure => o !== null);
}

async function applyChange(change: PlannedChange, client: BrokerClient): Promise<void> {
  if (change.action === "create") await client.createProvider(withoutNulls(change.provider.fields));
  else if (change.action === "update") {
    await client.updateProvider(change.id, change.body);
  } else await client.deleteProvider(change.id);
}

function withoutNulls(fields: ManifestRecord): ManifestRecord {
  return Object.fromEntries(
    Object.entries(fields).filter(
      ([, value]) => value !== null && !(isRecord(value) && Object.keys(value).length === 0),
    ),
  );
}
