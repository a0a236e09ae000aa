import type { ExportStatus } from "../db/schema";

/**
 * When a new export of a database may start (SPEC.md endpoint 1, behaviour 2 and 3; Limits:
 * "Export cooldown", "Concurrent exports"). Pure: the gate passes the latest export that did not
 * fail and the time. A failed export is never passed in, so it neither blocks nor starts a cooldown.
 */

/** The most recent export of the database that did not fail. */
export interface LatestExport {
  status: ExportStatus;
  /** When it was accepted (Unix ms): the cooldown window counts from here. */
  createdAt: number;
}

export interface GateSettings {
  cooldownSeconds: number;
  inFlightRetryAfterSeconds: number;
}

export type StartDecision =
  | { outcome: "start" }
  | { outcome: "export_in_flight"; retryAfterSeconds: number }
  | { outcome: "cooldown_active"; retryAfterSeconds: number };

export function decideExportStart(latest: LatestExport | null, now: number, settings: GateSettings): StartDecision {
  if (!latest || latest.status === "failed") return { outcome: "start" };
  if (latest.status === "pending" || latest.status === "running") {
    return { outcome: "export_in_flight", retryAfterSeconds: settings.inFlightRetryAfterSeconds };
  }
  const windowMs = settings.cooldownSeconds * 1000;
  const elapsed = now - latest.createdAt;
  // The window is half-open: at exactly createdAt + window the database may be exported again.
  if (elapsed >= windowMs) return { outcome: "start" };
  const left = Math.ceil((windowMs - elapsed) / 1000);
  // A clock that stepped back must not ask for more than one whole window.
  return { outcome: "cooldown_active", retryAfterSeconds: Math.min(settings.cooldownSeconds, Math.max(1, left)) };
}
