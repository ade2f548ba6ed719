// CPU time of processes from /proc (user + system, all threads), for CPU per request: it moves
// much less with the machine's load than req/s does.
import { readFileSync } from "node:fs";

/** Kernel clock ticks a second (USER_HZ): 100 on every Linux this runs on. */
const TICKS_PER_SECOND = 100;

/** User + system CPU of one process so far, in ms; 0 once it is gone. */
function processCpuMs(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return 0;
  }
  // Fields after the command name (which may hold spaces, so find its closing parenthesis):
  // state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** The pid and its direct children (an nginx master and its workers). */
export function withChildren(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "latin1");
    return [pid, ...children.trim().split(/\s+/).filter(Boolean).map(Number)];
  } catch {
    return [pid];
  }
}

/** The processes' CPU so far, in ms. */
export function cpuMs(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
}

/**
 * From a process's /proc/<pid>/stat text: the CPU of the children it has waited for (cutime +
 * cstime), in ms. A shell that ran a load generator and then printed its own stat gives that
 * generator's CPU this way.
 */
export function waitedChildrenCpuMs(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // cutime is field 16, cstime 17 (state is field 3, index 0 here).
  const ticks = Number(fields[13]) + Number(fields[14]);
  return (ticks * 1000) / TICKS_PER_SECOND;
}
