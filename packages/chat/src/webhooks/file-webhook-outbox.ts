import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { sep } from "node:path";
import type { OutboxEntry, WebhookOutbox } from "./webhook-outbox.js";

interface EntryFile extends OutboxEntry {
  /** Absent while pending; a settled entry is kept until swept, so that it is not added again. */
  status?: "delivered" | "failed";
  settled_at?: string;
  next_attempt_at: string;
  lease_owner?: string;
  lease_until?: string;
  last_error?: string;
}

/**
 * The outbox of a host keeping its runs in files: one `{dir}/{id}.json` per pending event,
 * written to a temporary file renamed over the old one. A delivered or given-up event's file is
 * kept, settled, until swept: the file run store hands an event over again after a crash
 * (file-run-store.ts), and finds it there. The process holding the directory is its only user,
 * as for the file run store.
 */
export function createFileWebhookOutbox(dir: string): WebhookOutbox {
  const path = (id: string) => `${dir}${sep}${id}.json`;
  // Ids are `msg_` and hex (step-events.ts): nothing else is ever a file name here.
  const isEntryId = (id: string) => /^msg_[0-9a-f]{32}$/.test(id);

  async function read(id: string): Promise<EntryFile | undefined> {
    try {
      return JSON.parse(await readFile(path(id), "utf8")) as EntryFile;
    } catch {
      return undefined;
    }
  }

  async function write(entry: EntryFile): Promise<void> {
    await mkdir(dir, { recursive: true });
    const temporary = `${path(entry.id)}.${process.pid}.tmp`;
    await writeFile(temporary, JSON.stringify(entry));
    await rename(temporary, path(entry.id));
  }

  const held = (entry: EntryFile, owner: string) =>
    entry.lease_owner === owner && (entry.lease_until ?? "") >= new Date().toISOString();

  return {
    async add(event) {
      if (!isEntryId(event.id)) throw new Error(`not an outbox event id: ${event.id}`);
      if (await read(event.id)) return;
      const now = new Date().toISOString();
      await write({
        id: event.id,
        type: event.type as OutboxEntry["type"],
        body: event.body,
        attempts: 0,
        created_at: now,
        next_attempt_at: now,
      });
    },
    async claim(owner, leaseMs, limit) {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch {
        return [];
      }
      const now = new Date().toISOString();
      const claimed: OutboxEntry[] = [];
      for (const name of names.sort()) {
        if (claimed.length >= limit) break;
        const id = name.replace(/\.json$/, "");
        if (!name.endsWith(".json") || !isEntryId(id)) continue;
        const entry = await read(id);
        if (!entry || entry.status || entry.next_attempt_at > now) continue;
        if (entry.lease_until && entry.lease_until >= now) continue;
        await write({
          ...entry,
          lease_owner: owner,
          lease_until: new Date(Date.now() + leaseMs).toISOString(),
        });
        claimed.push({
          id: entry.id,
          type: entry.type,
          body: entry.body,
          attempts: entry.attempts,
          created_at: entry.created_at,
        });
      }
      return claimed;
    },
    async settle(id, owner, result) {
      const entry = await read(id);
      if (!entry || entry.status || !held(entry, owner)) return;
      const { lease_owner: _owner, lease_until: _until, ...rest } = entry;
      const attempted = { ...rest, attempts: entry.attempts + 1 };
      if (result.delivered) {
        await write({ ...attempted, status: "delivered", settled_at: new Date().toISOString() });
        return;
      }
      await write({
        ...attempted,
        last_error: result.error,
        ...(result.retryAt
          ? { next_attempt_at: result.retryAt.toISOString() }
          : { status: "failed", settled_at: new Date().toISOString() }),
      });
    },
    async release(id, owner) {
      const entry = await read(id);
      if (!entry || entry.status || entry.lease_owner !== owner) return;
      const { lease_owner: _owner, lease_until: _until, ...rest } = entry;
      await write(rest);
    },
    async sweep(retentionSeconds) {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch {
        return 0;
      }
      const before = new Date(Date.now() - retentionSeconds * 1000).toISOString();
      let swept = 0;
      for (const name of names) {
        const id = name.replace(/\.json$/, "");
        if (!name.endsWith(".json") || !isEntryId(id)) continue;
        const entry = await read(id);
        if (!entry?.settled_at || entry.settled_at >= before) continue;
        await rm(path(id), { force: true });
        swept++;
      }
      return swept;
    },
  };
}
