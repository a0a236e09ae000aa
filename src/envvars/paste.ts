import type { EnvVariable } from "./rules";

/**
 * docs/envvars.md, rule 8: the paste box reads `KEY=value` lines. Pure; see the
 * README ("Environment variables") for where this differs from dotenv-family tools and why.
 */

/** A pasted variable and the line it starts on (1-based), so its messages can name the line. */
export interface PastedVariable extends EnvVariable {
  line: number;
}

export type PasteResult = { ok: true; variables: PastedVariable[] } | { ok: false; line: number; message: string };

const EXPORT_PREFIX = /^export[ \t]+/;
const PEM_BEGIN = "-----BEGIN";
/** The closing line of a PEM block: `-----END <label>-----`. */
const PEM_END = /^-----END [^-]*-----$/;

/** The sentence for a line that cannot be read, naming it. */
export function unreadableLineMessage(line: number, why: string): string {
  return `Line ${line} cannot be read: ${why}`;
}

/**
 * Reads pasted text. Lines are split on LF after CRLF and lone CR become LF (a browser form sends
 * CRLF). Blank lines and lines starting with `#` are dropped; `export ` is accepted before a key;
 * a later line for the same key wins. Nothing is expanded: `${VAR}` and `$(cmd)` stay as written.
 * The first line that cannot be read ends the reading with its line number.
 */
export function parsePaste(text: string): PasteResult {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const byKey = new Map<string, PastedVariable>();
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const line = lines[i]!.replace(/^[ \t]+/, "");
    if (line.trim() === "" || line.startsWith("#")) continue;
    const body = line.replace(EXPORT_PREFIX, "");
    const eq = body.indexOf("=");
    if (eq < 0) return { ok: false, line: lineNo, message: unreadableLineMessage(lineNo, "write it as KEY=value.") };
    const key = body.slice(0, eq).trim();
    if (key === "") return { ok: false, line: lineNo, message: unreadableLineMessage(lineNo, "it has no key before =.") };
    const raw = body.slice(eq + 1);
    const read = readValue(raw, lines, i);
    if (!read.ok) return { ok: false, line: lineNo, message: unreadableLineMessage(lineNo, read.why) };
    i = read.lastLine;
    byKey.delete(key);
    byKey.set(key, { key, value: read.value, line: lineNo });
  }
  return { ok: true, variables: [...byKey.values()] };
}

type ValueRead = { ok: true; value: string; lastLine: number } | { ok: false; why: string };

/** The value after `=` on line `index`, which may continue on later lines (quotes, PEM blocks). */
function readValue(raw: string, lines: readonly string[], index: number): ValueRead {
  const start = raw.replace(/^[ \t]+/, "");
  const quote = start[0];
  if (quote === '"' || quote === "'") return readQuoted(start.slice(1), quote, lines, index);
  if (start.startsWith(PEM_BEGIN)) return readPem(start, lines, index);
  // `#` starts a comment only after whitespace: `A=abc#def` keeps `abc#def`, `A=abc #note` gives `abc`.
  const comment = /[ \t]#/.exec(raw);
  const value = (comment ? raw.slice(0, comment.index) : raw).trim();
  return { ok: true, value, lastLine: index };
}

/** A quoted value ends at the next same quote, possibly lines later; backslashes are kept as written. */
function readQuoted(rest: string, quote: string, lines: readonly string[], index: number): ValueRead {
  const parts: string[] = [];
  for (let i = index, text = rest; ; text = lines[++i]!) {
    const close = text.indexOf(quote);
    if (close >= 0) {
      const after = text.slice(close + 1);
      if (after.trim() !== "" && !/^[ \t]+#/.test(after)) return { ok: false, why: `unexpected text after the closing ${quote}.` };
      parts.push(text.slice(0, close));
      return { ok: true, value: parts.join("\n"), lastLine: i };
    }
    parts.push(text);
    if (i + 1 >= lines.length) return { ok: false, why: `the ${quote} quote is never closed.` };
  }
}

/** `-----BEGIN ...` up to the `-----END ...-----` line: one value, its lines exactly as pasted. */
function readPem(start: string, lines: readonly string[], index: number): ValueRead {
  const block = [start];
  for (let i = index + 1; i < lines.length; i++) {
    block.push(lines[i]!);
    if (PEM_END.test(lines[i]!.trim())) return { ok: true, value: block.join("\n"), lastLine: i };
  }
  return { ok: false, why: "the -----BEGIN block has no -----END line." };
}
