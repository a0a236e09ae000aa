/**
 * The Dockerfile as the engine's reader splits it: parser directives at the top, comment lines,
 * line continuations (comment and blank lines inside one are dropped), instructions with the line
 * they start on, and shell-like words with quotes, escapes and `$VAR` / `${VAR}` substitution.
 *
 * Read for the build-source rule (build-sources.ts), so it leans to seeing more rather than less:
 * heredoc bodies (`RUN <<EOF`) are read as instructions too, since Docker 20.10's classic builder
 * has no heredocs and runs such lines as instructions of their own.
 */

export interface Instruction {
  /** The 1-based line the instruction starts on. */
  line: number;
  /** Upper case: `FROM`, `COPY`, ... */
  keyword: string;
  /** Everything after the keyword, continuation lines joined. */
  rest: string;
}

export interface Directive {
  line: number;
  value: string;
}

export interface DockerfileText {
  /** Parser directives by lower-case name (`syntax`, `escape`). */
  directives: Map<string, Directive>;
  instructions: Instruction[];
}

/** moby's parser directive pattern; directives end at the first line that is not one. */
const DIRECTIVE = /^#[ \t]*([a-zA-Z][a-zA-Z0-9]*)[ \t]*=[ \t]*(.+?)[ \t]*$/;

/** Reads a Dockerfile with `escape` as its escape character (its `# escape=` directive, or `\`). */
export function readDockerfile(text: string, escape?: string): DockerfileText {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n|\r/);
  const directives = new Map<string, Directive>();
  let i = 0;
  for (; i < lines.length; i++) {
    const directive = DIRECTIVE.exec(lines[i] ?? "");
    if (!directive) break;
    const name = (directive[1] ?? "").toLowerCase();
    if (!directives.has(name)) directives.set(name, { line: i + 1, value: directive[2] ?? "" });
  }
  const esc = escape ?? (directives.get("escape")?.value === "`" ? "`" : "\\");
  const continues = (line: string) => line.trimEnd().endsWith(esc);
  const skippable = (line: string) => line.trim() === "" || line.trimStart().startsWith("#");
  const instructions: Instruction[] = [];
  while (i < lines.length) {
    const start = i;
    const physical = lines[i++] ?? "";
    if (skippable(physical)) continue;
    let joined = physical;
    while (continues(joined)) {
      joined = joined.trimEnd().slice(0, -1);
      // Comment and blank lines inside a continuation are dropped; the continuation goes on.
      while (i < lines.length && skippable(lines[i] ?? "")) i++;
      if (i >= lines.length) break;
      joined += lines[i++] ?? "";
    }
    const [, keyword = "", rest = ""] = /^\s*(\S+)\s*([\s\S]*)$/.exec(joined) ?? [];
    instructions.push({ line: start + 1, keyword: keyword.toUpperCase(), rest: rest.trim() });
  }
  return { directives, instructions };
}

/**
 * The leading `--name=value` flags of an instruction's arguments and what follows them. A flag's
 * value may be quoted; quotes and escapes are removed as the engine's flag reader does.
 */
export function splitFlags(rest: string, escape: string): { flags: { name: string; value: string | null; raw: string }[]; after: string } {
  const flags: { name: string; value: string | null; raw: string }[] = [];
  let text = rest.trimStart();
  while (text.startsWith("--")) {
    const end = wordEnd(text, escape);
    const raw = text.slice(0, end);
    const word = unquote(raw, escape) ?? raw;
    const eq = word.indexOf("=");
    flags.push({ name: (eq < 0 ? word.slice(2) : word.slice(2, eq)).toLowerCase(), value: eq < 0 ? null : word.slice(eq + 1), raw });
    text = text.slice(end).trimStart();
  }
  return { flags, after: text };
}

/** Where the word at the start of `text` ends: the first whitespace outside quotes. */
function wordEnd(text: string, escape: string): number {
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === escape && quote !== "'") i++;
    else if (quote !== null) quote = ch === quote ? null : quote;
    else if (ch === '"' || ch === "'") quote = ch;
    else if (/\s/.test(ch ?? "")) return i;
  }
  return text.length;
}

/** The words of plain arguments, split at whitespace outside quotes (still quoted). */
export function splitWords(text: string, escape: string): string[] {
  const words: string[] = [];
  let rest = text.trim();
  while (rest !== "") {
    const end = wordEnd(rest, escape);
    words.push(rest.slice(0, end));
    rest = rest.slice(end).trimStart();
  }
  return words;
}

/** A word's text with quotes and escapes removed and no substitution; null when a quote is left open. */
function unquote(word: string, escape: string): string | null {
  const expanded = expandWord(word, escape, () => ({ known: true, value: "" }), false);
  return expanded.ok ? expanded.value : null;
}

/** A variable's value as the build will see it, or unknown (set by the engine, or by a build argument). */
export type Lookup = (name: string) => { known: true; value: string } | { known: false };

export type Expanded = { ok: true; value: string } | { ok: false; unknown: string } | { ok: false; unreadable: string };

/**
 * A word as the engine's shell-word reader gives it: single quotes literal, double quotes with
 * substitution, the escape character taking the next character literally, and `$NAME`, `${NAME}`,
 * `${NAME:-word}`, `${NAME:+word}`. Any other `${...}` form is unreadable (refused, not guessed).
 */
export function expandWord(word: string, escape: string, lookup: Lookup, substitute = true): Expanded {
  let out = "";
  let quote: string | null = null;
  for (let i = 0; i < word.length; i++) {
    const ch = word[i] ?? "";
    if (quote === "'") {
      if (ch === "'") quote = null;
      else out += ch;
    } else if (ch === escape) {
      const next = word[i + 1];
      if (next === undefined) break;
      // Inside double quotes the escape only protects `$`, `"` and itself.
      if (quote === '"' && next !== "$" && next !== '"' && next !== escape) out += ch;
      out += next;
      i++;
    } else if (ch === '"' || (ch === "'" && quote === null)) {
      quote = quote === ch ? null : ch;
    } else if (ch === "$" && substitute) {
      const sub = substitution(word, i, escape, lookup);
      if (!sub.ok) return sub;
      out += sub.value;
      i = sub.end - 1;
    } else out += ch;
  }
  if (quote !== null) return { ok: false, unreadable: `an unclosed ${quote === '"' ? "double" : "single"} quote` };
  return { ok: true, value: out };
}

function substitution(word: string, at: number, escape: string, lookup: Lookup): { ok: true; value: string; end: number } | { ok: false; unknown: string } | { ok: false; unreadable: string } {
  const plain = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(word.slice(at));
  if (plain) {
    const found = lookup(plain[1] ?? "");
    return found.known ? { ok: true, value: found.value, end: at + plain[0].length } : { ok: false, unknown: plain[1] ?? "" };
  }
  if (word[at + 1] !== "{") return { ok: true, value: "$", end: at + 1 };
  const close = word.indexOf("}", at);
  const braced = close < 0 ? null : /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}]*))?\}$/.exec(word.slice(at, close + 1));
  if (!braced) return { ok: false, unreadable: `the substitution ${word.slice(at, close < 0 ? undefined : close + 1)}` };
  const [, name = "", op, alt = ""] = braced;
  const found = lookup(name);
  if (!found.known) return { ok: false, unknown: name };
  if (op === undefined) return { ok: true, value: found.value, end: close + 1 };
  const other = expandWord(alt, escape, lookup);
  if (!other.ok) return other;
  const value = op === ":-" ? (found.value === "" ? other.value : found.value) : found.value === "" ? "" : other.value;
  return { ok: true, value, end: close + 1 };
}
