/**
 * Nothing secret in a stored log line: every env value of the app that appears in a line is
 * replaced by `****` before the line is kept (runtime logs, deploy logs) or sent (live stream).
 *
 * Values shorter than MIN_MASKED_LENGTH are not masked: a value like `1`, `on` or `8080` would
 * blank out ordinary words and numbers everywhere in the log, and hides nothing a secret would.
 * A value of several lines (a PEM key) is masked line by line, each line of it that is long enough.
 * Lines are masked whole (the stream decoder completes a line before it is masked), so a value
 * never falls across two pieces of storage; a line cut at its length limit also loses a trailing
 * start of a value.
 */

export const MASK = "****";
/** The shortest value that is masked; see above. */
export const MIN_MASKED_LENGTH = 6;
/** What the stream decoder appends to a line cut at its limit (`docker-stream.ts`). */
const CUT_MARK = " [line cut]";

/** The strings to mask, from the app's env values: long enough, deduplicated, longest first. */
export function secretsToMask(values: Iterable<string>): string[] {
  const pieces = new Set<string>();
  for (const value of values) {
    for (const piece of value.split(/\r?\n/)) if (piece.length >= MIN_MASKED_LENGTH) pieces.add(piece);
  }
  return [...pieces].sort((a, b) => b.length - a.length);
}

/** The line with every secret replaced by MASK. `secrets` comes from `secretsToMask`. */
export function maskLine(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0) return text;
  const cut = text.endsWith(CUT_MARK);
  let out = cut ? maskTrailingStart(text.slice(0, -CUT_MARK.length), secrets) : text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(MASK);
  return cut ? out + CUT_MARK : out;
}

/** A line cut in the middle of a value ends with its first characters: those go too. */
function maskTrailingStart(text: string, secrets: readonly string[]): string {
  for (const secret of secrets) {
    for (let n = Math.min(secret.length - 1, text.length); n >= MIN_MASKED_LENGTH; n--) {
      if (text.endsWith(secret.slice(0, n))) return text.slice(0, -n) + MASK;
    }
  }
  return text;
}

/** Masks every line of a text (a deploy log's output, several lines at once). */
export function maskText(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0) return text;
  return text.split("\n").map((line) => maskLine(line, secrets)).join("\n");
}
