export interface PeriodicPassOptions {
  /** Pause between the end of one pass and the start of the next. */
  intervalMs: number;
  /** One pass; its failure is reported and the next pass still runs. */
  run: () => Promise<unknown>;
  onError: (error: unknown) => void;
}

export interface PeriodicPass {
  start(): void;
  /** No pass starts after this; resolves once a pass in progress has ended. */
  stop(): Promise<void>;
  /** Whether `stop` was called since the last `start` (a long pass checks it to end early). */
  readonly stopping: boolean;
}

/**
 * Background work in passes (the refresh loop, webhook delivery): one pass at a time, the next
 * an interval after the last ended, never holding the process open, stopped cleanly.
 */
export function createPeriodicPass(options: PeriodicPassOptions): PeriodicPass {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;
  let stopRequested = false;

  function schedule() {
    if (stopped) return;
    timer = setTimeout(() => {
      running = options
        .run()
        .catch(options.onError)
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, options.intervalMs);
    timer.unref();
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      stopRequested = false;
      schedule();
    },
    async stop() {
      stopped = true;
      stopRequested = true;
      clearTimeout(timer);
      await running;
    },
    get stopping() {
      return stopRequested;
    },
  };
}
