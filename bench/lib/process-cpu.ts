import { readdirSync, readFileSync } from "node:fs";

/** /proc counts in USER_HZ, which Linux fixes at 100 for user space. */
const msPerTick = 10;

/**
 * CPU time (user + system) a process has used so far, in ms, from /proc; undefined where there
 * is none. The CPU a server spends per call does not depend on what else runs on the machine,
 * as its throughput does.
 */
export function processCpuMs(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // Fields after the command name, which may hold spaces: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * msPerTick;
}

/** CPU time so far (ms) of every process on this machine whose command name is `comm`, by pid. */
export function commandCpuMs(comm: string): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== comm) continue;
    } catch {
      continue;
    }
    byPid.set(Number(entry), processCpuMs(Number(entry)) ?? 0);
  }
  return byPid;
}

/**
 * CPU spent between two readings of `commandCpuMs`: processes that started count whole, ones that
 * ended in between are not counted (their time is gone from /proc), so this errs low.
 */
export function cpuSpentMs(before: Map<number, number>, after: Map<number, number>): number {
  let spent = 0;
  for (const [pid, ms] of after) spent += ms - (before.get(pid) ?? 0);
  return spent;
}

/** The machine's CPU time so far from /proc/stat, in ticks: all of it, and what was stolen. */
export function machineTicks(): { total: number; steal: number } {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1);
  const ticks = fields.slice(0, 8).map(Number);
  return { total: ticks.reduce((a, b) => a + b, 0), steal: ticks[7] };
}

/**
 * Percent of the machine's CPU time the hypervisor gave to others between two readings: a run
 * with much of it measured a busy host as much as the code.
 */
export function stealPercent(
  before: ReturnType<typeof machineTicks>,
  after: ReturnType<typeof machineTicks>,
): number {
  const total = after.total - before.total;
  return total > 0 ? Math.round((1000 * (after.steal - before.steal)) / total) / 10 : 0;
}
