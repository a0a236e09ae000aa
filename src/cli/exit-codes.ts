/**
 * The client's exit codes, documented in the README ("Downloading exports from scripts") and in
 * `--help`. Scripts branch on them, so a code never changes meaning.
 */
export const ExitCode = {
  /** The archive is saved and its SHA-256 matches `X-Export-SHA256`. */
  OK: 0,
  /** Anything not covered below: an unexpected reply, or 500 INTERNAL_ERROR. */
  FAILURE: 1,
  /** Bad arguments, or EXPORT_API_TOKEN / the base URL missing. */
  USAGE: 2,
  /** The token was refused (401/403 on start), or the link's signature is invalid. */
  AUTH: 3,
  /** The database does not exist for this token, or the export failed (404). */
  NOT_FOUND: 4,
  /** The link expired (401 SIGNED_URL_EXPIRED) or the archive expired (410 EXPORT_EXPIRED). */
  EXPIRED: 5,
  /** The saved bytes do not match `X-Export-SHA256`; the part file was deleted. */
  CHECKSUM: 6,
  /** The server could not be reached, or the connection kept failing. */
  NETWORK: 7,
  /** `--no-wait`: no export can start now (cooldown, or one started elsewhere is running). */
  NOT_NOW: 8,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure that ends the run: its message is for people, `code` (the API's, if any) for scripts. */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = "CliError";
  }
}
