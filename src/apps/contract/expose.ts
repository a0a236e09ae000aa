/**
 * docs/apps.md, contract 2: no `PORT` variable is set; the first `EXPOSE` line in the
 * built file gives the port probed; with no `EXPOSE` line, 8000. A line naming two ports uses the
 * first; a variable reference in the line is not read and falls back to 8000.
 *
 * Decisions beyond the spec, each with a test:
 * - A port range (`8000-8010`) names its first port, as a two-port line does.
 * - The probe speaks HTTP, so only TCP ports count (SPEC Limits: one HTTP port): `/udp` and `/sctp`
 *   ports on the line are passed over; a line with no TCP port falls back to 8000.
 * - Anything Docker itself would refuse (port 0, above 65535, not a number, no port) falls back to
 *   8000 with a reason naming it, rather than guessing.
 * - "First EXPOSE line in the file" is literal: a multi-stage file's earlier stage counts, and
 *   `ONBUILD EXPOSE` (an instruction for a later image) does not.
 */

/** Probed when the build file names no usable port. */
export const DEFAULT_PORT = 8000;

export interface ProbedPort {
  port: number;
  source: "expose" | "default" | "variable";
  /** One line for the deploy log, e.g. `first EXPOSE line, 3000`. */
  reason: string;
}

const fallback = (why: string, source: ProbedPort["source"] = "default"): ProbedPort => ({
  port: DEFAULT_PORT,
  source,
  reason: `${why}, default ${DEFAULT_PORT}`,
});

/** The port the deploy probes, read from the build file's text (null: no build file text). */
export function probedPort(dockerfileText: string | null): ProbedPort {
  const line = dockerfileText === null ? null : firstExposeArguments(dockerfileText);
  if (line === null) return fallback("no EXPOSE line");
  if (line.includes("$")) return fallback("EXPOSE uses a variable", "variable");
  const specs = line.split(/\s+/).filter((word) => word !== "");
  if (specs.length === 0) return fallback("EXPOSE names no port");
  for (const spec of specs) {
    const match = /^(\d+)(?:-(\d+))?(?:\/([A-Za-z]+))?$/.exec(spec);
    const first = match ? Number(match[1]) : NaN;
    const last = match?.[2] === undefined ? first : Number(match[2]);
    const protocol = (match?.[3] ?? "tcp").toLowerCase();
    if (!match || !isPort(first) || !isPort(last) || last < first || !["tcp", "udp", "sctp"].includes(protocol)) {
      return fallback(`EXPOSE names "${spec}", not a valid port`);
    }
    if (protocol !== "tcp") continue;
    const range = last !== first ? ` (first of ${first}-${last})` : "";
    return { port: first, source: "expose", reason: `first EXPOSE line, ${first}${range}` };
  }
  return fallback("EXPOSE names no TCP port");
}

function isPort(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && n <= 65535;
}

/**
 * The argument text of the file's first EXPOSE instruction, or null when it has none. Follows the
 * Dockerfile reader: parser directives (only `escape` matters here), comment lines, line
 * continuations (comment and blank lines inside one are dropped) and heredoc bodies, whose lines
 * are data, not instructions.
 */
function firstExposeArguments(text: string): string | null {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  let escape = "\\";
  let i = 0;
  // Parser directives sit at the very top; the first other line ends them.
  for (; i < lines.length; i++) {
    const directive = /^#\s*([A-Za-z][A-Za-z0-9_-]*)\s*=\s*(.*?)\s*$/.exec(lines[i] ?? "");
    if (!directive) break;
    if (directive[1]?.toLowerCase() === "escape" && (directive[2] === "`" || directive[2] === "\\")) escape = directive[2];
  }
  const continues = (line: string) => line.trimEnd().endsWith(escape);
  const isSkippable = (line: string) => line.trim() === "" || line.trimStart().startsWith("#");
  while (i < lines.length) {
    const physical = lines[i++] ?? "";
    if (isSkippable(physical)) continue;
    let instruction = physical;
    while (continues(instruction) && i < lines.length) {
      const next = lines[i++] ?? "";
      if (!isSkippable(next)) instruction = instruction.trimEnd().slice(0, -1) + next;
    }
    if (continues(instruction)) instruction = instruction.trimEnd().slice(0, -1);
    const [, keyword = "", rest = ""] = /^\s*(\S+)\s*([\s\S]*)$/.exec(instruction) ?? [];
    if (keyword.toUpperCase() === "EXPOSE") return rest;
    i = skipHeredocBodies(keyword, rest, lines, i);
  }
  return null;
}

/** After a RUN/COPY/ADD with `<<EOF`-style heredocs, the index of the line after their bodies. */
function skipHeredocBodies(keyword: string, rest: string, lines: string[], i: number): number {
  if (!["RUN", "COPY", "ADD"].includes(keyword.toUpperCase())) return i;
  for (const [, dash, , word] of rest.matchAll(/<<(-?)(["']?)([A-Za-z_][A-Za-z0-9_]*)\2/g)) {
    while (i < lines.length) {
      const line = lines[i++] ?? "";
      if ((dash ? line.replace(/^\t+/, "") : line) === word) break;
    }
  }
  return i;
}
