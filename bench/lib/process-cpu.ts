import { readFileSync } from "node:fs";

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
