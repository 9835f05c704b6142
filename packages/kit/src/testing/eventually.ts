import { setTimeout as sleep } from "node:timers/promises";

/**
 * Polls until `check` holds. The deadline only turns a hang into a readable failure; contract
 * tests never assert how long something took. Its default is far above what anything takes on a
 * quiet machine: with two suites and a benchmark beside it, a memory service's first chain check
 * on PostgreSQL took over 10 s.
 */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  deadlineMs = 30_000,
): Promise<void> {
  const giveUpAt = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}
