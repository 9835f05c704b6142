export type MessageHandler = (message: string, channel: string) => void;

/** Stops a subscription; resolves once the server acknowledged it. Idempotent. */
export type Unsubscribe = () => Promise<void>;

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
  publish(channel: string, message: string): Promise<void>;
  /** Resolves only after the server acknowledged the subscription. */
  subscribe(channel: string, handler: MessageHandler): Promise<Unsubscribe>;
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
