/**
 * Resident memory of the workerd processes under `wrangler dev`, read from /proc. wrangler runs
 * two: the runtime executing the Worker (and its Durable Objects, queues and local storage), and
 * the proxy in front of it that owns the public port. Each is measured on its own.
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";

/** Which workerd: the Worker's runtime or wrangler's proxy in front of it. */
export type WorkerdRole = "runtime" | "proxy";

/** Peak resident set per role, in bytes. */
export type RssByRole = Record<WorkerdRole, number>;

interface Workerd {
  pid: number;
  role: WorkerdRole;
}

/** The workerd processes descending from `rootPid`; the proxy is the one listening on `port`. */
export function findWorkerd(rootPid: number, port: number): Workerd[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // comm may hold spaces or parentheses; the fields after its closing ")" are plain.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // exited while listing
    }
  }
  const descends = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === rootPid) return true;
    return false;
  };
  const found: Workerd[] = [];
  for (const pid of parent.keys()) {
    if (!descends(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "workerd") continue;
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (args.length < 2) continue; // a zombie left by an earlier runtime
      found.push({ pid, role: args.includes(`--socket-addr=entry=127.0.0.1:${port}`) ? "proxy" : "runtime" });
    } catch {
      // exited while reading
    }
  }
  return found;
}

function statusField(pid: number, field: "VmRSS" | "VmHWM"): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) * 1024 : 0;
}

/**
 * Follows the peak resident memory of each workerd while something runs: the kernel's high-water
 * mark (`VmHWM`, reset at the start through `clear_refs`) where the kernel allows the reset, and
 * a sample every 20 ms in any case, so a peak between samples is still caught.
 */
export class RssPeak {
  readonly #processes: Workerd[];
  readonly #peak: RssByRole = { runtime: 0, proxy: 0 };
  readonly #timer: ReturnType<typeof setInterval>;
  #hwmReset = true;

  constructor(rootPid: number, port: number) {
    this.#processes = findWorkerd(rootPid, port);
    if (!this.#processes.some((p) => p.role === "runtime")) throw new Error("no workerd runtime found under wrangler dev");
    for (const { pid } of this.#processes) {
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, "5");
      } catch {
        this.#hwmReset = false;
      }
    }
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), 20);
  }

  #sample(field: "VmRSS" | "VmHWM" = "VmRSS"): void {
    for (const { pid, role } of this.#processes) {
      try {
        this.#peak[role] = Math.max(this.#peak[role], statusField(pid, field));
      } catch {
        // the process is gone; its last sample stands
      }
    }
  }

  /** Stops following; the peak per role, bytes. */
  stop(): RssByRole {
    clearInterval(this.#timer);
    this.#sample();
    if (this.#hwmReset) this.#sample("VmHWM");
    return { ...this.#peak };
  }
}

/** The pid of the workerd that runs the Worker (not wrangler's proxy in front of it). */
export function runtimeWorkerdPid(rootPid: number, port: number): number {
  const runtime = findWorkerd(rootPid, port).find((p) => p.role === "runtime");
  if (!runtime) throw new Error("no workerd runtime found under wrangler dev");
  return runtime.pid;
}

/** Current resident memory per role, bytes (the idle figure when nothing runs). */
export function currentRss(rootPid: number, port: number): RssByRole {
  const now: RssByRole = { runtime: 0, proxy: 0 };
  for (const { pid, role } of findWorkerd(rootPid, port)) now[role] += statusField(pid, "VmRSS");
  return now;
}
