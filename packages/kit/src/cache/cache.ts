export type MessageHandler = (message: string, channel: string) => void;

/** Stops a subscription; resolves once the server acknowledged it. Idempotent. */
export type Unsubscribe = () => Promise<void>;

export interface SubscribeOptions {
  /**
   * Told when messages may have been missed: the connection carrying the subscription dropped.
   * The store re-subscribes when it can, but pub/sub keeps nothing, so a subscriber that must not
   * miss a message stops here and catches up from its own log.
   */
  onInterrupted?: (error: Error) => void;
}

/**
 * Reports of changed keys, for a cache kept in process memory in front of this one.
 * `onChange(keys)` comes after the keys were written, deleted or expired by any client;
 * `onChange(undefined)` when changes may have gone unreported (the watch was interrupted), which
 * means: forget everything.
 */
export type KeyChangeHandler = (keys: string[] | undefined) => void;

export interface KeyWatch {
  /** Whether changes are being reported now; while false, nothing read may be remembered. */
  readonly active: boolean;
  stop(): Promise<void>;
}

/** One entry of a numbered log, written by `appendSequenced`. */
export interface SequencedEntry {
  /** The counter the entry's number is taken from (as INCR). */
  counterKey: string;
  /** The list the entry is appended to; it keeps its `keep` newest entries. */
  listKey: string;
  keep: number;
  /** Where the entry is published once it is in the list. */
  channel: string;
  /** The entry is `head`, its number in decimal, then `tail`. */
  head: string;
  tail: string;
  /** When set, the counter and the list expire this long after this write. */
  ttlSeconds?: number;
}

/**
 * The cache + pub/sub port. Redis (`ioredis`) and an in-process map implement it.
 * Lists keep their newest element at index 0 when written with `lpush`.
 */
export interface Cache {
  readonly kind: "redis" | "memory";
  get(key: string): Promise<string | null>;
  /** Sets a value; `ttlSeconds` makes it expire. */
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  del(...keys: string[]): Promise<number>;
  incr(key: string): Promise<number>;
  expire(key: string, ttlSeconds: number): Promise<void>;
  lpush(key: string, ...values: string[]): Promise<number>;
  rpush(key: string, ...values: string[]): Promise<number>;
  /** Inclusive range, negative indexes count from the end, as Redis LRANGE. */
  lrange(key: string, start: number, stop: number): Promise<string[]>;
  /** Keeps only the inclusive range, as Redis LTRIM. */
  ltrim(key: string, start: number, stop: number): Promise<void>;
  /**
   * `lpush` then keep only the `keep` newest elements, in one round trip: a capped newest-first
   * window written without a second call per append.
   */
  lpushTrim(key: string, values: string[], keep: number): Promise<void>;
  llen(key: string): Promise<number>;
  /**
   * Numbers an entry from its counter, appends it to its capped list and publishes it, as one
   * atomic step in one round trip; resolves to the number. Entries of one counter are listed and
   * published in number order, and a subscriber that missed one live finds it in the list.
   */
  appendSequenced(entry: SequencedEntry): Promise<number>;
  publish(channel: string, message: string): Promise<void>;
  /** Resolves only after the server acknowledged the subscription. */
  subscribe(
    channel: string,
    handler: MessageHandler,
    options?: SubscribeOptions,
  ): Promise<Unsubscribe>;
  /** Number of live local subscriptions (handlers), for leak checks and metrics. */
  subscriberCount(): number;
  /**
   * Reports changes to keys starting with one of `prefixes`; resolves once reports flow (Redis:
   * server-assisted client-side caching, CLIENT TRACKING in broadcast mode, on connections of
   * the watch's own).
   */
  watchKeys(prefixes: string[], onChange: KeyChangeHandler): Promise<KeyWatch>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
