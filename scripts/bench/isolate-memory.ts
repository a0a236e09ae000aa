/**
 * The memory of the Worker's own isolate, read through the inspector (`Runtime.getHeapUsage`: the
 * V8 heap in use and the ArrayBuffer backing stores outside it), set beside the resident memory of
 * the whole workerd process, which also holds wrangler's local D1, R2 and queue emulations (each an
 * isolate of its own), their SQLite and blob files, and the runtime's own allocations.
 */
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import type { DevServer } from "../lib/dev-server";
import { type Inspector, inspector, workerInspectorUrl } from "./inspector";

/** TCP ports `pid` listens on, from its socket descriptors and /proc/net/tcp. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed while listing
    }
  }
  const ports: number[] = [];
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[3] === "0A" && inodes.has(f[9] ?? "")) ports.push(parseInt(f[1]!.split(":")[1]!, 16));
  }
  return ports;
}

/**
 * One inspector per isolate of the runtime: each local service's directly, the Worker's through
 * wrangler's inspector proxy (which holds the runtime's only session for it).
 */
export async function isolates(pid: number, workerInspector: string): Promise<Map<string, Inspector>> {
  for (const port of listeningPorts(pid)) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(2000) });
      const targets = (await res.json()) as { id: string; webSocketDebuggerUrl: string }[];
      if (!Array.isArray(targets)) continue;
      const found = new Map<string, Inspector>();
      const [worker] = (await (await fetch(`${workerInspector}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
      found.set("worker", await inspector(worker!.webSocketDebuggerUrl));
      for (const t of targets) {
        if (t.id.startsWith("core:user:control-plane")) continue;
        try {
          found.set(t.id, await inspector(t.webSocketDebuggerUrl));
        } catch {
          console.log(`(isolate ${t.id} not inspectable)`);
        }
      }
      return found;
    } catch {
      // not the inspector
    }
  }
  throw new Error("the runtime's inspector was not found");
}

interface HeapUsage {
  usedSize: number;
  totalSize: number;
  backingStorageSize?: number;
}

/** One isolate's figures, bytes. */
export interface IsolateMemory {
  heapUsed: number;
  arrayBuffers: number;
}

/** The figures at the moment `heapUsed + arrayBuffers` was highest, per isolate id ("worker" is ours). */
export type IsolatePeaks = Map<string, IsolateMemory>;

const total = (m: IsolateMemory) => m.heapUsed + m.arrayBuffers;

/**
 * Follows every isolate's heap and ArrayBuffers while something runs, sampling every 250 ms (one
 * request at a time per isolate; a busy isolate answers when it next yields, so a sample can lag).
 */
export class IsolatePeak {
  readonly #peaks: IsolatePeaks = new Map();
  /** Each isolate's first sample, before the work. */
  readonly start: IsolatePeaks = new Map();
  #running = true;
  #loop: Promise<void> = Promise.resolve();
  #inspectors: Map<string, Inspector> = new Map();

  static async start(server: DevServer, runtimePid: number): Promise<IsolatePeak> {
    const peak = new IsolatePeak();
    peak.#inspectors = await isolates(runtimePid, workerInspectorUrl(server));
    await peak.#sample();
    peak.#loop = (async () => {
      while (peak.#running) {
        await new Promise((r) => setTimeout(r, 250));
        await peak.#sample();
      }
    })();
    return peak;
  }

  async #sample(): Promise<void> {
    await Promise.all(
      [...this.#inspectors].map(async ([id, devtools]) => {
        const h = await devtools.send<HeapUsage>("Runtime.getHeapUsage", {}, 30_000);
        if (!h) return;
        const now = { heapUsed: h.usedSize, arrayBuffers: h.backingStorageSize ?? 0 };
        if (!this.start.has(id)) this.start.set(id, now);
        const before = this.#peaks.get(id);
        if (!before || total(now) > total(before)) this.#peaks.set(id, now);
      }),
    );
  }

  /** Stops sampling (after one last sample) and closes the inspectors; the peak of each isolate and the first samples. */
  async stop(): Promise<{ peaks: IsolatePeaks; start: IsolatePeaks }> {
    this.#running = false;
    await this.#loop;
    await this.#sample();
    for (const devtools of this.#inspectors.values()) devtools.close();
    return { peaks: this.#peaks, start: this.start };
  }
}

/**
 * The Worker's own isolate's peak, and the other isolates' (the local emulations) growth over their
 * first sample summed, bytes; `workerGrowth` is the Worker isolate's own growth.
 */
export function splitPeaks(peaks: IsolatePeaks, start: IsolatePeaks = new Map()): { worker: IsolateMemory; workerGrowth: number; othersGrowth: number } {
  const worker = peaks.get("worker") ?? { heapUsed: Number.NaN, arrayBuffers: Number.NaN };
  const before = (id: string) => (start.has(id) ? total(start.get(id)!) : 0);
  let othersGrowth = 0;
  for (const [id, m] of peaks) if (id !== "worker") othersGrowth += total(m) - before(id);
  return { worker, workerGrowth: total(worker) - before("worker"), othersGrowth };
}
