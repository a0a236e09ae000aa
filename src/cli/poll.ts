/**
 * The client rules (docs/api.md, export rule 7) as pure decisions: given one reply of the start or the download
 * endpoint, what the client does next. No I/O here; `export.ts` and `download.ts` act on them.
 */
import { CliError, ExitCode } from "./exit-codes";

/** What the client reads from one HTTP reply. */
export interface Reply {
  status: number;
  /** The error envelope's `code`, when the body was one. */
  code?: string;
  /** `Retry-After` in whole seconds, when present and readable. */
  retryAfter?: number;
  /** The pending envelope's `status` (`pending` or `running`). */
  exportStatus?: string;
}

/** A wait reply without a usable Retry-After (the server always sends one) waits this long. */
export const FALLBACK_RETRY_SECONDS = 5;

/** Consecutive network failures without progress before the client gives up (exit NETWORK). */
export const MAX_NETWORK_ATTEMPTS = 5;

/** Reads `Retry-After`: delta-seconds (what the API sends) or an HTTP date; undefined if neither. */
export function parseRetryAfter(header: string | null, nowMs: number): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  // An HTTP date starts with the day name ("Sat, 21 Nov 2026 12:00:30 GMT").
  const at = /^[A-Za-z]{3},/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/** Seconds to wait on a wait reply: its Retry-After, at least 1 s so a 0 cannot spin. */
export function waitSeconds(reply: Reply): number {
  return Math.max(1, reply.retryAfter ?? FALLBACK_RETRY_SECONDS);
}

/** Seconds before network retry `attempt` (1-based): 1, 2, 4, 8, 16. */
export function networkBackoffSeconds(attempt: number): number {
  return 2 ** Math.min(Math.max(attempt - 1, 0), 4);
}

const label = (reply: Reply): string => reply.code ?? `HTTP ${reply.status}`;
const codeSuffix = (reply: Reply): string => (reply.code ? ` (${reply.code})` : "");

export type StartDecision =
  | { action: "download" }
  | { action: "poll-stored-link"; message: string }
  | { action: "wait"; seconds: number; message: string }
  | { action: "stop"; error: CliError };

export interface StartContext {
  databaseId: string;
  /** An unexpired link this client stored when it started an export of the database. */
  hasStoredLink: boolean;
  noWait: boolean;
}

/** docs/api.md, export rules 2-4 and 6: the three 429 codes differ; an unknown 429 code is a wait. */
export function decideStart(reply: Reply, context: StartContext): StartDecision {
  const { databaseId, hasStoredLink, noWait } = context;
  if (reply.status === 200) return { action: "download" };
  if (reply.status === 429) {
    const seconds = waitSeconds(reply);
    if (reply.code === "cooldown_active") {
      if (noWait) {
        const message = `database ${databaseId} was exported recently (cooldown_active); a new export can start in ${seconds} s`;
        return { action: "stop", error: new CliError(ExitCode.NOT_NOW, message, reply.code) };
      }
      return { action: "wait", seconds, message: `cooldown active, waiting ${seconds} s (the whole cooldown) before starting a new export` };
    }
    if (reply.code === "export_in_flight") {
      if (hasStoredLink) {
        return { action: "poll-stored-link", message: "an export is already running (export_in_flight); polling the link stored when it was started" };
      }
      const elsewhere = `an export of database ${databaseId} is already running (export_in_flight) and no link for it is stored here`;
      if (noWait) {
        return { action: "stop", error: new CliError(ExitCode.NOT_NOW, `${elsewhere}; try again in ${seconds} s`, reply.code) };
      }
      return { action: "wait", seconds, message: `${elsewhere}; waiting ${seconds} s for it to end before starting anew` };
    }
    return { action: "wait", seconds, message: `rate limited (${label(reply)}), retrying in ${seconds} s` };
  }
  if (reply.status === 401 || reply.status === 403) {
    const message = `the API token was refused (${label(reply)}); check EXPORT_API_TOKEN`;
    return { action: "stop", error: new CliError(ExitCode.AUTH, message, reply.code) };
  }
  if (reply.status === 404) {
    const message = `database ${databaseId} was not found for this token (${label(reply)})`;
    return { action: "stop", error: new CliError(ExitCode.NOT_FOUND, message, reply.code) };
  }
  const message = `starting the export failed with HTTP ${reply.status}${codeSuffix(reply)}`;
  return { action: "stop", error: new CliError(ExitCode.FAILURE, message, reply.code) };
}

export type DownloadDecision =
  | { action: "save" }
  | { action: "restart-from-zero" }
  | { action: "wait"; seconds: number; message: string }
  | { action: "stop"; error: CliError };

/** docs/api.md, export rule 7: 503 and 429 wait; every other failure ends the loop. */
export function decideDownload(reply: Reply): DownloadDecision {
  const stop = (exitCode: ExitCode, message: string): DownloadDecision => ({
    action: "stop",
    error: new CliError(exitCode, message, reply.code),
  });
  switch (reply.status) {
    case 200:
    case 206:
      return { action: "save" };
    case 416:
      return { action: "restart-from-zero" };
    case 503: {
      const seconds = waitSeconds(reply);
      return { action: "wait", seconds, message: `export ${reply.exportStatus ?? "pending"}, retrying in ${seconds} s` };
    }
    case 429: {
      const seconds = waitSeconds(reply);
      return { action: "wait", seconds, message: `rate limited (${label(reply)}), retrying in ${seconds} s` };
    }
    case 401:
      return reply.code === "SIGNED_URL_EXPIRED"
        ? stop(ExitCode.EXPIRED, "the download link has expired (SIGNED_URL_EXPIRED); start a new export")
        : stop(ExitCode.AUTH, `the download link was refused (${label(reply)}); start a new export`);
    case 404:
      return stop(ExitCode.NOT_FOUND, `the export failed or does not exist (${label(reply)}); a new export must be started`);
    case 410:
      return stop(ExitCode.EXPIRED, `the archive is past its retention time (${label(reply)}); start a new export`);
    case 500:
      return stop(ExitCode.FAILURE, `the server could not read the finished archive (${label(reply)})`);
    default:
      return stop(ExitCode.FAILURE, `the download failed with HTTP ${reply.status}${codeSuffix(reply)}`);
  }
}
