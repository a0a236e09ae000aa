/**
 * CPU time a process used while something ran, beside the time the machine's hypervisor took from
 * every core (`steal`), both read from /proc. It tells a slow run's kind apart: the same CPU time
 * over a longer wall time is waiting; more CPU time with no steal is more work, or a slower core.
 */
import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc's CPU figures (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** A process's /proc stat fields from field 3 (state) on: after the `(comm)`, which may hold spaces. */
function statFields(pid: number | "self"): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** utime + stime of a process (all its threads), in ticks: fields 14 and 15. */
function processTicks(pid: number): number {
  const fields = statFields(pid);
  return Number(fields[11]) + Number(fields[12]);
}

/** cutime + cstime of this process (fields 16 and 17): the CPU time of every child it has waited for, and theirs. */
function waitedChildrenTicks(): number {
  const fields = statFields("self");
  return Number(fields[13]) + Number(fields[14]);
}

/** The machine's stolen ticks, summed over every core (the `cpu` line's 8th figure). */
function stealTicks(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!;
  return Number(line.trim().split(/\s+/)[8] ?? 0);
}

export interface CpuUse {
  wallSeconds: number;
  /** The process's CPU time (user + system, all threads). */
  cpuSeconds: number;
  /** Time the hypervisor took from the machine's cores meanwhile, summed over the cores. */
  stealSeconds: number;
}

/** Starts measuring the ticks `read` counts; the returned function stops and reports. */
function measure(read: () => number): () => CpuUse {
  const started = performance.now();
  const cpu = read();
  const steal = stealTicks();
  return () => ({
    wallSeconds: (performance.now() - started) / 1000,
    cpuSeconds: (read() - cpu) / TICKS_PER_SECOND,
    stealSeconds: (stealTicks() - steal) / TICKS_PER_SECOND,
  });
}

/** Starts measuring process `pid`; the returned function stops and reports. */
export function measureCpu(pid: number): () => CpuUse {
  return measure(() => processTicks(pid));
}

/**
 * Starts measuring the children this process runs and waits for meanwhile (a native pipeline's
 * processes); the returned function stops and reports (call it once they have been waited for).
 */
export function measureChildrenCpu(): () => CpuUse {
  return measure(waitedChildrenTicks);
}

/** One line for a run's notes: wall, CPU (and its share of one core), steal. */
export function describeCpuUse(what: string, use: CpuUse, whose = "workerd"): string {
  const share = use.wallSeconds > 0 ? use.cpuSeconds / use.wallSeconds : 0;
  return `${what}: ${use.wallSeconds.toFixed(1)} s, ${whose} CPU ${use.cpuSeconds.toFixed(1)} s (${share.toFixed(2)} of a core), steal ${use.stealSeconds.toFixed(1)} s`;
}
