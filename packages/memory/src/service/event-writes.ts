import type { Sql } from "@atrium/kit";
import { joinsChains, type SessionRecord } from "../domain.js";
import type { ChainCheckScheduler } from "../pipeline/chain-check-scheduler.js";
import type { EventStore, InsertedEvent, NewEvent } from "../store/events.js";
import { createIdempotencyStore } from "../store/idempotency.js";
import type { StmWindow } from "./stm-window.js";

export interface EventWritesOptions {
  sql: Sql;
  events: EventStore;
  window: StmWindow;
  /** Told about stored messages, so that a chain check reads them. */
  chainChecks: Pick<ChainCheckScheduler, "request">;
}

export interface EventWrite<R> {
  /** The RPC, which with the tenant and the key names an idempotency claim. */
  operation: string;
  /** The caller's idempotency key, if it sent one. */
  key: string | undefined;
  session: SessionRecord;
  /** Stored together in one transaction: all or none. */
  inputs: NewEvent[];
  respond: (stored: InsertedEvent[]) => R;
}

/**
 * The one write path of StoreInteraction and StoreEvent: the durable insert (once per
 * idempotency key), then the STM window and the chain check, which follow the insert but not
 * each other.
 */
export function createEventWrites({ sql, events, window, chainChecks }: EventWritesOptions) {
  const idempotency = createIdempotencyStore(sql);

  /** A repeated key returns the first response and stores nothing (`stored` is then absent). */
  async function storeOnce<R>({ operation, key, session, inputs, respond }: EventWrite<R>) {
    if (key === undefined) {
      const stored = await events.insertAll(inputs);
      return { response: respond(stored), stored };
    }
    const { response, extra } = await idempotency.once(
      { tenantId: session.tenantId, operation, key },
      async (tx) => {
        const stored = await events.insertAllIn(tx, inputs);
        return {
          response: respond(stored),
          extra: stored,
          eventIds: stored.map((s) => s.event.id),
        };
      },
    );
    return { response, stored: extra };
  }

  return async function write<R>(
    request: EventWrite<R>,
  ): Promise<{ response: R; stored?: InsertedEvent[] }> {
    const outcome = await storeOnce(request);
    const { stored } = outcome;
    if (stored) {
      // One cache round trip and, unless a check of the scope is already due or running, one
      // queue round trip, in parallel. The window append never rejects (a cache failure drops
      // the list).
      await Promise.all([
        window.appendAll(request.session, stored),
        stored.some((s) => joinsChains(s.event)) ? chainChecks.request(request.session) : null,
      ]);
    }
    return outcome;
  };
}
