/**
 * What a build may start from (docs/security.md, "Builds and source fetches"): `FROM`,
 * `COPY --from=` and `RUN --mount=...,from=` may name only `scratch`, an earlier stage of the same
 * Dockerfile (by name, or by index for `--from`), or an image in a registry. Every tenant's images
 * sit on the engine that builds, and its classic builder resolves a name or an id prefix
 * (`FROM 9983f5`) from that local store first; so references that can only mean the engine's own
 * images are refused before the build starts, with a sentence naming the line:
 *
 * - id-like references: a bare run of hex digits (an id prefix), `sha256:...`;
 * - the platform's own repositories: any path with a `control-plane` component (apps' images are
 *   `control-plane/app-<id>:<deploy>`), and anything on the platform's registry (REGISTRY);
 * - registries on the engine's own network: `localhost`, IP addresses that are not public, names
 *   without a dot (`registry:5000`), private-use suffixes (`.local`, `.internal`, ...);
 * - what cannot be known before the build: a variable that is not an ARG default given before the
 *   first FROM (or is one the engine sets: BUILDKIT_*, TARGETARCH, ...), an unreadable word.
 *
 * The rest is left to the engine, which is told to pull every base image (`pull=1`), so a name that
 * passes is fetched from its registry, never served from another tenant's pull. The file is read
 * with both escape characters (`\` and the backtick) and refused if either reading refuses, so a
 * parser-directive trick cannot hide a line.
 */
import { classifyHost } from "../../source/address";
import { type DockerfileText, type Instruction, type Lookup, expandWord, readDockerfile, splitFlags, splitWords } from "./dockerfile-reader";

/** The closing sentence of every refusal. */
export const BUILD_SOURCES_RULE = "Builds may start from scratch, an earlier stage, or an image in a registry.";

export interface BuildSourcePlatform {
  /** REGISTRY (Swarm): `host[:port][/path]` the platform pushes apps' images to; empty: none. */
  registry?: string;
}

/** Build arguments the engine itself may set: their value is not in the Dockerfile. */
const ENGINE_SET = /^(BUILDKIT_\w*|TARGETPLATFORM|TARGETOS|TARGETARCH|TARGETVARIANT|BUILDPLATFORM|BUILDOS|BUILDARCH|BUILDVARIANT)$/;

/** The red-panel sentence for the first reference a build may not start from, or null. */
export function buildSourceRefusal(text: string, platform: BuildSourcePlatform = {}): string | null {
  const primary = readDockerfile(text);
  const escape = primary.directives.get("escape")?.value === "`" ? "`" : "\\";
  const other = escape === "`" ? "\\" : "`";
  return refusalIn(primary, escape, platform) ?? refusalIn(readDockerfile(text, other), other, platform);
}

type Vars = Map<string, { known: true; value: string } | { known: false }>;

interface Reading {
  escape: string;
  platform: BuildSourcePlatform;
  /** ARGs before the first FROM: what FROM may use. */
  globals: Vars;
  /** ARGs of the current stage. */
  stageArgs: Vars;
  /** Stage names (lower case, "" when unnamed) in order, the current one last. */
  stages: string[];
}

function refusalIn(file: DockerfileText, escape: string, platform: BuildSourcePlatform): string | null {
  const syntax = file.directives.get("syntax");
  if (syntax) {
    const refusal = referenceRefusal(syntax.value, { allowScratch: false, stages: [], lookup: () => ({ known: true, value: "" }), escape });
    if (refusal) return sentence(syntax.line, `# syntax=${syntax.value}`, refusal);
  }
  const reading: Reading = { escape, platform, globals: new Map(), stageArgs: new Map(), stages: [] };
  for (const instruction of file.instructions) {
    const refusal = instructionRefusal(instruction, reading, "");
    if (refusal) return refusal;
  }
  return null;
}

function instructionRefusal(ins: Instruction, r: Reading, prefix: string): string | null {
  const { escape } = r;
  if (ins.keyword === "ONBUILD") {
    const [, keyword = "", rest = ""] = /^(\S+)\s*([\s\S]*)$/.exec(ins.rest) ?? [];
    // An ONBUILD runs in a later build, whose stages are not known here.
    return instructionRefusal({ line: ins.line, keyword: keyword.toUpperCase(), rest }, { ...r, stages: [""] }, `${prefix}ONBUILD `);
  }
  if (ins.keyword === "ARG") {
    const vars = r.stages.length === 0 ? r.globals : r.stageArgs;
    for (const word of splitWords(ins.rest, escape)) declareArg(word, vars, r);
    return null;
  }
  if (ins.keyword === "FROM") {
    const { after } = splitFlags(ins.rest, escape);
    const words = splitWords(after, escape);
    const base = words[0];
    if (base !== undefined) {
      const refusal = check(base, { allowScratch: true, stages: r.stages, lookup: lookupIn(r.globals), escape }, r.platform);
      if (refusal) return sentence(ins.line, `${prefix}FROM ${base}`, refusal);
    }
    r.stages.push(words[1]?.toLowerCase() === "as" && words[2] ? words[2].toLowerCase() : "");
    r.stageArgs = new Map();
    return null;
  }
  const earlier = { allowScratch: true, stages: r.stages.slice(0, -1), indexes: true, lookup: lookupIn(r.stageArgs, r.globals), escape };
  const { flags } = splitFlags(ins.rest, escape);
  for (const flag of flags) {
    if ((ins.keyword === "COPY" || ins.keyword === "ADD") && flag.name === "from" && flag.value !== null) {
      const refusal = check(flag.value, earlier, r.platform);
      if (refusal) return sentence(ins.line, `${prefix}${ins.keyword} ${flag.raw}`, refusal);
    }
    if (ins.keyword === "RUN" && flag.name === "mount" && flag.value !== null) {
      for (const from of mountSources(flag.value)) {
        const refusal = check(from, earlier, r.platform);
        if (refusal) return sentence(ins.line, `${prefix}RUN ${flag.raw}`, refusal);
      }
    }
  }
  return null;
}

/** `NAME` or `NAME=default`; a default is read with the ARGs before it. */
function declareArg(word: string, vars: Vars, r: Reading): void {
  const eq = word.indexOf("=");
  const name = eq < 0 ? word : word.slice(0, eq);
  if (ENGINE_SET.test(name)) return void vars.set(name, { known: false });
  if (eq < 0) {
    // Without a default a stage ARG takes the global one; no build arguments are passed.
    const global = vars === r.globals ? undefined : r.globals.get(name);
    return void vars.set(name, global ?? { known: true, value: "" });
  }
  const value = expandWord(word.slice(eq + 1), r.escape, vars === r.globals ? lookupIn(r.globals) : lookupIn(r.stageArgs, r.globals));
  vars.set(name, value.ok ? { known: true, value: value.value } : { known: false });
}

function lookupIn(...scopes: Vars[]): Lookup {
  return (name) => {
    if (ENGINE_SET.test(name)) return { known: false };
    for (const vars of scopes) {
      const found = vars.get(name);
      if (found) return found;
    }
    return { known: true, value: "" };
  };
}

/** The `from` values of a `--mount` flag's comma-separated `key=value` fields. */
function mountSources(value: string): string[] {
  const fields = value.match(/("[^"]*"|[^,])+/g) ?? [];
  return fields
    .map((field) => field.replace(/"/g, ""))
    .filter((field) => /^from=/i.test(field.trim()))
    .map((field) => field.trim().slice(5));
}

interface Allowed {
  allowScratch: boolean;
  /** Names of the stages this reference may name. */
  stages: string[];
  /** `--from` also takes an earlier stage by its index. */
  indexes?: boolean;
  lookup: Lookup;
  escape: string;
}

/** Why a reference word is refused (the clause after the instruction), or null. */
function check(word: string, allowed: Allowed, platform: BuildSourcePlatform): string | null {
  return referenceRefusal(word, allowed) ?? platformRefusal(word, allowed, platform);
}

function referenceRefusal(word: string, allowed: Allowed): string | null {
  const expanded = expandWord(word, allowed.escape, allowed.lookup);
  if (!expanded.ok) {
    return "unknown" in expanded
      ? `uses $${expanded.unknown}, whose value is not known before the build (only ARG defaults given before the first FROM are)`
      : `cannot be read (${expanded.unreadable})`;
  }
  const value = expanded.value;
  if (allowed.allowScratch && value === "scratch") return null;
  if (value !== "" && allowed.stages.includes(value.toLowerCase())) return null;
  if (allowed.indexes && /^\d+$/.test(value) && Number(value) < allowed.stages.length) return null;
  const ref = parseReference(value);
  if (!ref) return "is not an image name";
  if (ref.domain === null && /^([0-9a-f]+|sha256)$/i.test(ref.path)) return LOCAL_STORE;
  if (ref.path.split("/").includes("control-plane")) return LOCAL_STORE;
  return null;
}

const LOCAL_STORE = "names an image on the build engine, not in a registry";

function platformRefusal(word: string, allowed: Allowed, platform: BuildSourcePlatform): string | null {
  const expanded = expandWord(word, allowed.escape, allowed.lookup);
  const ref = expanded.ok ? parseReference(expanded.value) : null;
  if (!ref?.domain) return null;
  const domain = ref.domain.toLowerCase();
  const registryHost = (platform.registry ?? "").split("/")[0]?.toLowerCase() ?? "";
  if (registryHost !== "" && domain === registryHost) return "names an image in this platform's own registry, where apps' images are kept";
  const host = domain.replace(/:\d+$/, "");
  if (host === "localhost" || classifyHost(host) !== "public") return "names a registry on the build engine's own network";
  return null;
}

export interface ImageReference {
  /** The registry, when the reference names one (`registry.example.net:5000`), else null (Docker Hub). */
  domain: string | null;
  /** The repository path without the registry: `library/node` is written `node`. */
  path: string;
}

const DOMAIN_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const DOMAIN = new RegExp(`^${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*(?::[0-9]+)?$`);
const NAME_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;

/** An image reference by the distribution grammar (`[domain/]path[:tag][@digest]`), or null. */
export function parseReference(text: string): ImageReference | null {
  const at = text.indexOf("@");
  if (at >= 0 && !DIGEST.test(text.slice(at + 1))) return null;
  let name = at >= 0 ? text.slice(0, at) : text;
  const colon = name.lastIndexOf(":");
  if (colon > name.lastIndexOf("/")) {
    if (!TAG.test(name.slice(colon + 1))) return null;
    name = name.slice(0, colon);
  }
  const parts = name.split("/");
  const first = parts[0] ?? "";
  const hasDomain = parts.length > 1 && (first.includes(".") || first.includes(":") || first === "localhost");
  if (hasDomain && !DOMAIN.test(first)) return null;
  const path = hasDomain ? parts.slice(1) : parts;
  if (path.length === 0 || !path.every((part) => NAME_COMPONENT.test(part))) return null;
  return { domain: hasDomain ? first : null, path: path.join("/") };
}

function sentence(line: number, shown: string, clause: string): string {
  return `Dockerfile line ${line}: ${shown} ${clause}. ${BUILD_SOURCES_RULE}`;
}
