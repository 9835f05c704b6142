import { Redis } from "ioredis";
import type { Cache, KeyWatch, MessageHandler, Unsubscribe } from "./cache.js";
import { type HandlerErrorReporter, warnHandlerError, warnKeyWatchError } from "./handler-error.js";
import { assertKeep } from "./list-range.js";
import { watchRedisKeys } from "./redis-key-watch.js";
import { ttlMilliseconds } from "./ttl.js";

export interface RedisCacheOptions {
  url: string;
  onHandlerError?: HandlerErrorReporter;
  /** Names both connections (CLIENT SETNAME) so operators can tell them apart. */
  connectionName?: string;
}

interface Subscription {
  handler: MessageHandler;
}

/** Local handlers of one channel, sharing one Redis subscription. */
interface Channel {
  subscriptions: Set<Subscription>;
  subscribedInRedis: boolean;
  /** The last SUBSCRIBE/UNSUBSCRIBE issued for this channel; changes are applied in order. */
  settled: Promise<void>;
}

/**
 * The Redis cache: one connection for commands and one dedicated to pub/sub, since a connection
 * in subscriber mode can run nothing else. ioredis re-subscribes after a reconnect.
 */
export function createRedisCache(options: RedisCacheOptions): Cache {
  const onHandlerError = options.onHandlerError ?? warnHandlerError;
  const name = options.connectionName;
  // Auto-pipelining: commands issued in one tick (many requests' reads and writes) go out in one
  // write and come back in one read, instead of a system call pair each.
  const commands = new Redis(options.url, {
    enableAutoPipelining: true,
    ...(name ? { connectionName: `${name}:commands` } : {}),
  });
  // No ready check on the pub/sub connection: a SUBSCRIBE queued while connecting can be written
  // during the INFO handshake, its reply puts the connection in subscriber mode, the check then
  // fails and the subscription silently never delivers. Pub/sub does not need the dataset loaded.
  const subscriber = new Redis(options.url, {
    enableReadyCheck: false,
    ...(name ? { connectionName: `${name}:subscriber` } : {}),
  });
  const channels = new Map<string, Channel>();
  const watches = new Set<KeyWatch>();
  let closed = false;

  subscriber.on("message", (channelName: string, message: string) => {
    const channel = channels.get(channelName);
    if (channel === undefined) return;
    for (const { handler } of [...channel.subscriptions]) {
      try {
        handler(message, channelName);
      } catch (error) {
        onHandlerError(error, channelName);
      }
    }
  });

  /** Brings the Redis subscription of a channel in line with its local handlers. */
  function reconcile(channelName: string, channel: Channel): Promise<void> {
    const next = channel.settled
      .catch(() => undefined)
      .then(async () => {
        const wanted = channel.subscriptions.size > 0;
        if (wanted && !channel.subscribedInRedis) {
          await subscriber.subscribe(channelName);
          channel.subscribedInRedis = true;
        } else if (!wanted && channel.subscribedInRedis) {
          await subscriber.unsubscribe(channelName);
          channel.subscribedInRedis = false;
        }
        if (!wanted && !channel.subscribedInRedis && channels.get(channelName) === channel) {
          channels.delete(channelName);
        }
      });
    channel.settled = next;
    return next;
  }

  async function quit(connection: Redis): Promise<void> {
    try {
      await connection.quit();
    } catch {
      connection.disconnect();
    }
  }

  return {
    kind: "redis",

    get: (key) => commands.get(key),

    async set(key, value, ttlSeconds) {
      if (ttlSeconds === undefined) await commands.set(key, value);
      else await commands.set(key, value, "PX", ttlMilliseconds(ttlSeconds));
    },

    async del(...keys) {
      return keys.length === 0 ? 0 : commands.del(...keys);
    },

    incr: (key) => commands.incr(key),

    async expire(key, ttlSeconds) {
      await commands.pexpire(key, ttlMilliseconds(ttlSeconds));
    },

    async lpush(key, ...values) {
      return values.length === 0 ? commands.llen(key) : commands.lpush(key, ...values);
    },

    async rpush(key, ...values) {
      return values.length === 0 ? commands.llen(key) : commands.rpush(key, ...values);
    },

    lrange: (key, start, stop) => commands.lrange(key, start, stop),

    async ltrim(key, start, stop) {
      await commands.ltrim(key, start, stop);
    },

    async lpushTrim(key, values, keep) {
      assertKeep(keep);
      if (values.length === 0) {
        await commands.ltrim(key, 0, keep - 1);
        return;
      }
      // Issued together, both join the connection's auto-pipeline: one write shared with every
      // other command of this tick. (MULTI/EXEC would be a write of its own per call; a reader
      // between the two commands sees at most `values.length` extra old entries at the end.)
      await Promise.all([commands.lpush(key, ...values), commands.ltrim(key, 0, keep - 1)]);
    },

    llen: (key) => commands.llen(key),

    async publish(channel, message) {
      await commands.publish(channel, message);
    },

    async subscribe(channelName, handler): Promise<Unsubscribe> {
      if (closed) throw new Error("cache is closed");
      const subscription: Subscription = { handler };
      let channel = channels.get(channelName);
      if (channel === undefined) {
        channel = {
          subscriptions: new Set(),
          subscribedInRedis: false,
          settled: Promise.resolve(),
        };
        channels.set(channelName, channel);
      }
      const joined = channel;
      joined.subscriptions.add(subscription);
      try {
        await reconcile(channelName, joined);
      } catch (error) {
        joined.subscriptions.delete(subscription);
        reconcile(channelName, joined).catch(() => undefined);
        throw error;
      }
      let active = true;
      return async () => {
        if (!active) return;
        active = false;
        joined.subscriptions.delete(subscription);
        if (!closed) await reconcile(channelName, joined);
      };
    },

    subscriberCount() {
      let count = 0;
      for (const channel of channels.values()) count += channel.subscriptions.size;
      return count;
    },

    async watchKeys(prefixes, onChange) {
      if (closed) throw new Error("cache is closed");
      const watch = watchRedisKeys({
        url: options.url,
        prefixes,
        onChange,
        onError: warnKeyWatchError,
        ...(name ? { connectionName: name } : {}),
      });
      watches.add(watch);
      return {
        get active() {
          return watch.active;
        },
        async stop() {
          watches.delete(watch);
          await watch.stop();
        },
      };
    },

    async ping() {
      await commands.ping();
    },

    async close() {
      if (closed) return;
      closed = true;
      channels.clear();
      const stopping = [...watches].map((watch) => watch.stop());
      watches.clear();
      await Promise.all([quit(commands), quit(subscriber), ...stopping]);
    },
  };
}
