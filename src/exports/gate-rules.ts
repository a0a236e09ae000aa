import type { ExportStatus } from "../db/schema";
import { IN_FLIGHT, isOverdue } from "./export-state";

/**
 * When a new export of a database may start (docs/api.md, export rules 2 and 3:
 * the cooldown, one export at a time). Pure: the gate passes the latest export that is not
 * recorded as failed and the time. A failed export neither blocks nor starts a cooldown, and an
 * export past its deadline counts as failed.
 */

/** The most recent export of the database that is not recorded as failed. */
export interface LatestExport {
  status: ExportStatus;
  /** When it was accepted (Unix ms): the cooldown window counts from here. */
  createdAt: number;
  /** Past this moment (Unix ms) a pending or running export has failed. */
  deadlineAt: number;
}

export interface GateSettings {
  cooldownSeconds: number;
  inFlightRetryAfterSeconds: number;
}

export type StartDecision =
  /** `failLatest`: the latest export is past its deadline; record it failed before starting. */
  | { outcome: "start"; failLatest?: true }
  | { outcome: "export_in_flight"; retryAfterSeconds: number }
  | { outcome: "cooldown_active"; retryAfterSeconds: number };

export function decideExportStart(latest: LatestExport | null, now: number, settings: GateSettings): StartDecision {
  if (!latest || latest.status === "failed") return { outcome: "start" };
  // Started after the cooldown of anything older, so nothing older holds the start back either.
  if (isOverdue(latest, now)) return { outcome: "start", failLatest: true };
  if (IN_FLIGHT.has(latest.status)) {
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
