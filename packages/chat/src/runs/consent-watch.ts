import type { GatewayClient } from "@atrium/sdk";
import { newestActive } from "../agents/connection-consent.js";
import type { ConsentItem } from "../kernel/pending-item.js";
import { RunConflictError, type RunManager, RunNotFoundError } from "./run-manager.js";
import type { RunRecord } from "./run-store.js";

export interface ConsentWatchOptions {
  manager: Pick<RunManager, "yielded" | "resume">;
  /** The credential gateway the step asked for the consent (its connections are read). */
  gateway: Pick<GatewayClient, "listConnections">;
  /** How often the yielded consent steps are looked at. Default 2 s. */
  intervalMs?: number;
  onError?: (error: unknown, context: string) => void;
}

export interface ConsentWatch {
  /** Looks once; resolves with the number of steps this host resumed. */
  check(): Promise<number>;
  start(): void;
  /** Stops looking; a check under way finishes first. */
  stop(): Promise<void>;
}

/**
 * A connection made this long before the pause was recorded still answers it: the broker's and
 * the run store's clocks may differ, and the person may finish the consent as the step pauses.
 */
const clockSlackMs = 30_000;

/** The most steps resumed by one check; the rest wait for the next. */
const batch = 200;

const workspaceOf = (run: RunRecord) => {
  const value = run.request.context.workspace_id;
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
};

const consentItems = (run: RunRecord) =>
  (run.response?.pending ?? []).filter((p): p is ConsentItem => p.kind === "consent");

/**
 * Resumes each step that yielded for a consent once the connection it waits for is active.
 *
 * Why the chat host watches rather than takes the broker's `connection.created` webhook: the
 * watch needs nothing but the gateway the step already used (no subscription to create, no
 * secret to share, no route of the chat host the broker must reach), so a consent cannot be
 * missed because a webhook was never configured or a host was down when it was sent. Every
 * host watches; the resume is the ordinary one, a compare-and-set on the pause number in the
 * run store, so of two hosts (or a host and a person) answering the same pause exactly one
 * resumes the step and a trigger for an earlier pause is refused as stale. The cost is one
 * run-store query per interval, plus one connection list per waiting workspace.
 */
export function createConsentWatch(options: ConsentWatchOptions): ConsentWatch {
  const { manager, gateway } = options;
  const intervalMs = options.intervalMs ?? 2000;
  const onError = options.onError ?? (() => {});
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();

  async function resume(run: RunRecord, connectionId: string): Promise<boolean> {
    try {
      const { done } = await manager.resume(run.workflow_id, run.step_id, {
        pause: run.pauses,
        connection_id: connectionId,
      });
      done.catch((error) => onError(error, "consent resume"));
      return true;
    } catch (error) {
      // Another host, or a person, answered this pause first.
      if (error instanceof RunConflictError || error instanceof RunNotFoundError) return false;
      throw error;
    }
  }

  async function check(): Promise<number> {
    const waiting = await manager.yielded({ pending: "consent", limit: batch });
    const byWorkspace = new Map<string, RunRecord[]>();
    for (const run of waiting) {
      const workspace = workspaceOf(run);
      if (!workspace) continue;
      const runs = byWorkspace.get(workspace);
      if (runs) runs.push(run);
      else byWorkspace.set(workspace, [run]);
    }
    let resumed = 0;
    for (const [workspaceId, runs] of byWorkspace) {
      let connections: Awaited<ReturnType<typeof gateway.listConnections>>;
      try {
        connections = await gateway.listConnections({ workspaceId });
      } catch (error) {
        onError(error, `consent watch: connections of workspace ${workspaceId}`);
        continue;
      }
      for (const run of runs) {
        const pausedAt = new Date(Date.parse(run.updated_at) - clockSlackMs);
        const answer = consentItems(run)
          .map((item) => newestActive(connections, item.provider, pausedAt))
          .find((connection) => connection !== undefined);
        if (answer && (await resume(run, answer.id))) resumed++;
      }
    }
    return resumed;
  }

  function schedule(): void {
    timer = setTimeout(() => {
      running = check()
        .catch((error) => onError(error, "consent watch"))
        .finally(() => {
          if (timer) schedule();
        });
    }, intervalMs);
    timer.unref();
  }

  return {
    check,
    start() {
      if (!timer) schedule();
    },
    async stop() {
      clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
