/**
 * The events marked on the console's metric charts (docs/metrics.md, "Console"): deploys that went
 * live or failed, rollbacks, restarts by the control plane and crashes (the engine restarting the
 * instance's process), each placed on the step that holds it. Pure, so the page draws the same
 * markers with or without JavaScript.
 */
import { wentLive } from "../apps/history";
import type { DeployKind, DeployStatus } from "../db/schema";
import { xOf } from "./chart";

export const MARKER_KINDS = ["deploy-live", "deploy-failed", "rollback", "restart", "crash"] as const;
export type MarkerKind = (typeof MARKER_KINDS)[number];

/** One event: when (ms since the epoch), what, and how many of it (a step's crashes come as one count). */
export interface ChartEvent {
  at: number;
  kind: MarkerKind;
  count?: number;
}

/** The chart's time axis: the first point's start (Unix seconds), the step and the number of points. */
export interface ChartWindow {
  from: number;
  step: number;
  points: number;
}

export interface Marker {
  kind: MarkerKind;
  /** The point (step) that holds it, and its x in the drawing. */
  index: number;
  x: number;
  /** Its place among the markers of the same step (0 first), so their symbols do not overlap. */
  slot: number;
  /** Events of this kind in the step, and the earliest one's time (ms). */
  count: number;
  at: number;
  /** What happened, e.g. "Deploy live" or "3 crashes"; with its time, e.g. "Deploy live 14:32 UTC". */
  what: string;
  label: string;
}

/** Each kind's name (one, several), colour and symbol. */
export const MARKER_STYLE: Record<MarkerKind, { one: string; many: string; color: string; shape: "triangle" | "square" | "diamond" | "circle" | "cross" }> = {
  "deploy-live": { one: "Deploy live", many: "deploys live", color: "#1a7f37", shape: "triangle" },
  "deploy-failed": { one: "Deploy failed", many: "deploys failed", color: "#cf222e", shape: "square" },
  rollback: { one: "Rollback live", many: "rollbacks live", color: "#8250df", shape: "diamond" },
  restart: { one: "Restart", many: "restarts", color: "#0969da", shape: "circle" },
  crash: { one: "Crash", many: "crashes", color: "#bc4c00", shape: "cross" },
};

/**
 * What a finished deploy marks: a rollback or a deploy (or push) that went live (it may have been
 * replaced since), or one that failed; nothing while it is still under way.
 */
export function deployMarkerKind(status: DeployStatus, kind: DeployKind): MarkerKind | null {
  if (status === "failed") return "deploy-failed";
  if (!wentLive(status)) return null;
  return kind === "rollback" ? "rollback" : "deploy-live";
}

/** "14:32 UTC" for a minute-by-minute chart, "11-27 14:32 UTC" for longer steps. */
export function markerTime(ms: number, step: number): string {
  const iso = new Date(ms).toISOString();
  return `${step === 60 ? iso.slice(11, 16) : `${iso.slice(5, 10)} ${iso.slice(11, 16)}`} UTC`;
}

/**
 * The markers of the events inside the window: one per kind and step (several of one kind in a
 * step merged, with their count), in time order and, within a step, in MARKER_KINDS order.
 */
export function chartMarkers(events: readonly ChartEvent[], window: ChartWindow): Marker[] {
  const end = window.from + window.points * window.step;
  const merged = new Map<string, { kind: MarkerKind; index: number; count: number; at: number }>();
  for (const event of events) {
    const seconds = Math.floor(event.at / 1000);
    const count = event.count ?? 1;
    if (seconds < window.from || seconds >= end || !(count > 0)) continue;
    const index = Math.floor((seconds - window.from) / window.step);
    const key = `${index}:${event.kind}`;
    const found = merged.get(key);
    if (found) {
      found.count += count;
      found.at = Math.min(found.at, event.at);
    } else merged.set(key, { kind: event.kind, index, count, at: event.at });
  }
  const sorted = [...merged.values()].sort((a, b) => a.index - b.index || MARKER_KINDS.indexOf(a.kind) - MARKER_KINDS.indexOf(b.kind));
  return sorted.map((m, i) => {
    let slot = 0;
    while (i - slot - 1 >= 0 && sorted[i - slot - 1]!.index === m.index) slot++;
    const style = MARKER_STYLE[m.kind];
    const what = m.count === 1 ? style.one : `${m.count} ${style.many}`;
    return { ...m, x: xOf(m.index, window.points), slot, what, label: `${what} ${markerTime(m.at, window.step)}` };
  });
}

/** The `d` of a marker's symbol, about 8 units across, centred on (x, y). */
export function markerPath(kind: MarkerKind, x: number, y: number): string {
  const r = 4;
  switch (MARKER_STYLE[kind].shape) {
    case "triangle":
      return `M${x - r} ${y - r}H${x + r}L${x} ${y + r}Z`;
    case "square":
      return `M${x - r} ${y - r}H${x + r}V${y + r}H${x - r}Z`;
    case "diamond":
      return `M${x} ${y - r}L${x + r} ${y}L${x} ${y + r}L${x - r} ${y}Z`;
    case "circle":
      return `M${x - r} ${y}A${r} ${r} 0 1 0 ${x + r} ${y}A${r} ${r} 0 1 0 ${x - r} ${y}Z`;
    case "cross":
      return `M${x - r} ${y - r}L${x + r} ${y + r}M${x + r} ${y - r}L${x - r} ${y + r}`;
  }
}
