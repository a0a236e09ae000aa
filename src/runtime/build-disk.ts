/**
 * The build disk limit (BUILD_DISK_MB) for the classic builder. Docker cannot cap a build's disk
 * on overlay2 over ext4 (`storage-opt size` needs xfs with project quotas, and /build takes no
 * storage options), so the build is measured while it runs: each RUN step's container (the
 * progress stream's ` ---> Running in <id>`) every POLL_MS, and each committed step's image
 * (` ---> <id>`), both as the whole image so far, base image included. Past the limit the build
 * call is ended, which makes the engine stop the step and remove its container. Ids come from
 * the engine's own lines and are hex only (buildDiskEvent), so they go into paths as they are.
 *
 * Limits, said plainly: a step that writes faster than it is measured overshoots by what it writes
 * between two polls (2 s of disk speed); BuildKit's steps are not engine containers and are not
 * measured (deploys use the classic builder whenever they carry limits, see docker-build.ts).
 */
import { type BuildStream, followBuild } from "./docker-build";
import type { DockerEngineClient } from "./docker-client";
import type { BuildSpec } from "./types";

export const BUILD_DISK_POLL_MS = 2000;

export type BuildDiskEvent = { running: string } | { layer: string };

/**
 * What one line of the classic builder's output says about the build's disk, or null. A step's
 * own output can print such lines too: a container id that is not one is found missing and
 * dropped, and no line ends the watch of a real one (only its removal does).
 */
export function buildDiskEvent(line: string): BuildDiskEvent | null {
  const running = /^ ---> Running in ([0-9a-f]{12,64})$/.exec(line);
  if (running) return { running: running[1]! };
  const layer = /^ ---> ([0-9a-f]{12,64})$/.exec(line);
  return layer ? { layer: layer[1]! } : null;
}

/** The red-panel sentence for a build past its disk limit. */
export function buildDiskMessage(limitBytes: number): string {
  const mib = Math.floor(limitBytes / (1024 * 1024));
  const size = mib % 1024 === 0 ? `${mib / 1024} GiB` : `${mib} MiB`;
  return `The build was stopped: its image grew past ${size} of disk (base image included), the most a build may use (BUILD_DISK_MB). Make the image smaller, or ask the operator to raise the limit.`;
}

/** Watches one classic build's disk; `exceeded` holds the sentence once it has gone past the limit. */
export class BuildDiskWatch {
  exceeded: string | undefined;
  /** Step containers seen and not yet found gone. */
  private readonly containers = new Set<string>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly pending = new Set<Promise<void>>();
  private readonly measuring = new Set<string>();

  constructor(
    private readonly client: DockerEngineClient,
    private readonly limitBytes: number,
    private readonly onExceeded: () => void,
    private readonly pollMs = BUILD_DISK_POLL_MS,
  ) {}

  /** Takes build output (whole lines). */
  see(text: string): void {
    for (const line of text.split("\n")) {
      const event = buildDiskEvent(line.trimEnd());
      if (!event) continue;
      if ("layer" in event) {
        this.measure(`/images/${event.layer}/json`, {}, "Size");
        continue;
      }
      this.containers.add(event.running);
      this.measureContainer(event.running);
      this.timer ??= setInterval(() => {
        for (const id of this.containers) this.measureContainer(id);
      }, this.pollMs);
    }
  }

  /** Waits for the measurements under way (the last step's), then stops watching. */
  async settle(): Promise<void> {
    this.stop();
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A container measured now is not asked again until that answer is in (sizing a big layer takes a while). */
  private measureContainer(id: string): void {
    if (this.measuring.has(id)) return;
    this.measuring.add(id);
    this.measure(`/containers/${id}/json`, { size: "1" }, "SizeRootFs", () => this.containers.delete(id), () => this.measuring.delete(id));
  }

  private measure(path: string, query: Record<string, string>, field: "Size" | "SizeRootFs", gone?: () => void, done?: () => void): void {
    if (this.exceeded) return done?.();
    const run = this.client
      .json<Record<string, unknown>>("GET", path, { query, accept: [404] })
      .then(({ status, body }) => {
        if (status === 404) return gone?.();
        if (Number(body[field] ?? 0) > this.limitBytes && !this.exceeded) {
          this.exceeded = buildDiskMessage(this.limitBytes);
          this.stop();
          this.onExceeded();
        }
      })
      // A measurement that fails is the next one's to make.
      .catch(() => undefined)
      .finally(() => {
        this.pending.delete(run);
        done?.();
      });
    this.pending.add(run);
  }
}

/**
 * Reads a build's progress to its end as followBuild does, measuring its disk when `diskBytes` is
 * given (classic builds). Past the limit the engine's stream is cut, which ends the build call:
 * the engine stops the step and removes its container. `exceeded` is then the red panel's sentence.
 */
export async function followBuildWithinDisk(
  client: DockerEngineClient,
  res: Response,
  progress: BuildStream,
  diskBytes: number | undefined,
  onOutput: BuildSpec["onOutput"],
): Promise<{ progress: BuildStream; exceeded?: string }> {
  if (!diskBytes || !res.body) return { progress: await followBuild(res, progress, onOutput) };
  let cut: TransformStreamDefaultController<Uint8Array> | undefined;
  const cutter = new TransformStream<Uint8Array, Uint8Array>({ start: (controller) => void (cut = controller) });
  const watch = new BuildDiskWatch(client, diskBytes, () => cut?.error(new Error("The build went past its disk limit.")));
  const watched = new Response(res.body.pipeThrough(cutter), { status: res.status, headers: res.headers });
  try {
    const read = await followBuild(watched, progress, async (text) => {
      watch.see(text);
      await onOutput?.(text);
    });
    await watch.settle();
    return watch.exceeded ? { progress: read, exceeded: watch.exceeded } : { progress: read };
  } catch (error) {
    if (watch.exceeded) return { progress, exceeded: watch.exceeded };
    throw error;
  } finally {
    watch.stop();
  }
}
