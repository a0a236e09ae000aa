/**
 * Structured logs: one JSON object per line, picked up by Workers observability.
 * Callers pass only non-secret fields: never a token, signature, password, cookie, SQL
 * parameter or environment value.
 */
export function log(level: "info" | "warn" | "error", msg: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level, msg, ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

/** What an unexpected error may put in a log line: its class and message, not its payload. */
export function describeError(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error_name: err.name, error_message: err.message, stack: err.stack };
  return { error_message: String(err) };
}
