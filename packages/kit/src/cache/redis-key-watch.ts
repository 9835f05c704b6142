import { Redis } from "ioredis";
import type { KeyChangeHandler, KeyWatch } from "./cache.js";

export interface RedisKeyWatchOptions {
  url: string;
  prefixes: string[];
  onChange: KeyChangeHandler;
  /**
   * A failed set-up (e.g. a server older than Redis 6: the watch stays inactive and tries again
   * on the next reconnect), or an exception from `onChange`.
   */
  onError: (error: unknown) => void;
  connectionName?: string;
  /** Takes each connection's error events (see RedisStateTracker); without it they are ignored. */
  track?: (connection: Redis) => void;
}

const INVALIDATIONS = "__redis__:invalidate";

/**
 * Server-assisted client-side caching over RESP2 (ioredis does not speak RESP3): a `receiver`
 * connection subscribes to Redis's invalidation channel, and a `controller` connection turns on
 * broadcast tracking for the prefixes with the receiver as its redirect target, so that every
 * write, deletion, expiry or eviction of a matching key, by any client, is reported. Reports flow
 * only while both connections are up and set up: when either drops, `active` turns false at once
 * and the handler hears `undefined` (forget everything), since changes made while it was down
 * will never be reported; both are set up again when they are back.
 *
 * Returns at once; `active` turns true when the first set-up is done.
 */
export function watchRedisKeys(options: RedisKeyWatchOptions): KeyWatch {
  const name = options.connectionName;
  const receiver = new Redis(options.url, {
    enableReadyCheck: false,
    // Re-subscribing by itself would put the connection in subscriber mode before CLIENT ID.
    autoResubscribe: false,
    ...(name ? { connectionName: `${name}:tracking` } : {}),
  });
  const controller = new Redis(options.url, {
    enableReadyCheck: false,
    ...(name ? { connectionName: `${name}:tracking-control` } : {}),
  });
  for (const connection of [receiver, controller]) {
    if (options.track) options.track(connection);
    // An error event nobody listens to is printed with its stack on every reconnect attempt.
    else connection.on("error", () => undefined);
  }
  const prefixArguments = options.prefixes.flatMap((prefix) => ["PREFIX", prefix]);
  let active = false;
  let stopped = false;
  /** Bumped whenever either connection drops: a set-up that raced a drop must not activate. */
  let drops = 0;
  /** The receiver's client id while it is subscribed on its current connection. */
  let receiverId: string | undefined;
  /** Bumped when the receiver drops: its client id and subscription went with it. */
  let receiverConnections = 0;
  let settingUp: Promise<void> = Promise.resolve();

  receiver.on("messageBuffer", (channel: Buffer, message: unknown) => {
    if (!active || channel.toString() !== INVALIDATIONS) return;
    try {
      // A null message (FLUSHALL, FLUSHDB) means every key may have changed.
      options.onChange(Array.isArray(message) ? message.map(String) : undefined);
    } catch (error) {
      options.onError(error);
    }
  });

  function drop(): void {
    drops++;
    if (!active) return;
    active = false;
    options.onChange(undefined);
  }
  receiver.on("close", () => {
    receiverId = undefined;
    receiverConnections++;
    drop();
  });
  controller.on("close", drop);

  async function setUp(): Promise<void> {
    if (stopped || active || receiver.status !== "ready" || controller.status !== "ready") return;
    const attempt = drops;
    if (receiverId === undefined) {
      const connection = receiverConnections;
      const id = String(await receiver.client("ID"));
      await receiver.subscribe(INVALIDATIONS);
      // Kept if only the controller dropped meanwhile: the receiver is subscribed either way.
      if (connection !== receiverConnections) return;
      receiverId = id;
    }
    if (attempt !== drops) return;
    // OFF first: after a receiver reconnect the controller may still track for the old one.
    await controller.call("CLIENT", "TRACKING", "OFF");
    await controller.call(
      "CLIENT",
      "TRACKING",
      "ON",
      "REDIRECT",
      receiverId,
      "BCAST",
      ...prefixArguments,
    );
    if (attempt === drops && !stopped) active = true;
  }

  const kick = () => {
    settingUp = settingUp.then(setUp).catch((error) => {
      if (!stopped) options.onError(error);
    });
  };
  receiver.on("ready", kick);
  controller.on("ready", kick);

  return {
    get active() {
      return active;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      active = false;
      await Promise.all(
        [receiver, controller].map((connection) =>
          connection.quit().catch(() => connection.disconnect()),
        ),
      );
    },
  };
}
