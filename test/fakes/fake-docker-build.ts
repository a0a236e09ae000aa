/**
 * The fake engine's builder: reads the tar context, parses the Dockerfile and "runs" it as
 * Docker's legacy builder reports it (the same JSON-lines messages). An image is the context's
 * files as COPY placed them plus the recorded ENV, EXPOSE, CMD and ENTRYPOINT. RUN executes
 * nothing, except: a command `false` (or `exit N`, N > 0) fails the step; `sleep N` waits N s.
 */
import { randomBytes } from "node:crypto";
import { gunzipSync } from "node:zlib";

export interface FakeFile {
  type: "file" | "dir" | "symlink";
  data: Uint8Array;
  mode: number;
  linkname?: string;
}

export interface FakeImage {
  /** `sha256:<64 hex>`, as Docker names images. */
  id: string;
  tags: string[];
  /** Absolute paths without the leading slash (`www/index.html`). */
  files: Map<string, FakeFile>;
  env: Record<string, string>;
  exposedPorts: string[];
  cmd: string[];
  entrypoint: string[];
  labels: Record<string, string>;
}

/** A build refused before it starts (Docker answers these with a status and `{message}`). */
export class BuildRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Reads a (possibly gzipped) tar into paths without `./` or leading slashes. */
export function readTar(input: Uint8Array): Map<string, FakeFile> {
  const bytes = input[0] === 0x1f && input[1] === 0x8b ? new Uint8Array(gunzipSync(input)) : input;
  const files = new Map<string, FakeFile>();
  const text = (from: number, len: number) => new TextDecoder().decode(bytes.subarray(from, from + len)).replace(/\0.*$/s, "");
  let offset = 0;
  let longName: string | undefined;
  while (offset + 512 <= bytes.length && bytes[offset] !== 0) {
    const size = parseInt(text(offset + 124, 12).trim() || "0", 8);
    const type = text(offset + 156, 1) || "0";
    const prefix = text(offset + 345, 155);
    const name = longName ?? (prefix ? `${prefix}/${text(offset, 100)}` : text(offset, 100));
    const data = bytes.slice(offset + 512, offset + 512 + size);
    longName = undefined;
    if (type === "x") longName = /\d+ path=([^\n]*)\n/.exec(new TextDecoder().decode(data))?.[1];
    else if (type === "L") longName = new TextDecoder().decode(data).replace(/\0.*$/s, "");
    else if (type === "0" || type === "5" || type === "2") {
      const path = normalize(name);
      const mode = parseInt(text(offset + 100, 8).trim() || "644", 8);
      if (path) files.set(path, { type: type === "5" ? "dir" : type === "2" ? "symlink" : "file", data, mode, linkname: text(offset + 157, 100) });
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/** One Dockerfile instruction after line continuations are joined. */
export interface Instruction {
  line: number;
  keyword: string;
  args: string;
  /** As Docker prints it in `Step N/M : ...`. */
  text: string;
}

const KNOWN = new Set(["FROM", "RUN", "CMD", "ENTRYPOINT", "COPY", "ADD", "ENV", "EXPOSE", "WORKDIR", "LABEL", "ARG", "USER", "VOLUME", "STOPSIGNAL", "HEALTHCHECK", "SHELL", "ONBUILD", "MAINTAINER"]);

/** Parses a Dockerfile; throws BuildRefused(400) with Docker's sentence for an unknown keyword. */
export function parseDockerfile(source: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = "";
  let startLine = 0;
  source.split(/\r?\n/).forEach((raw, index) => {
    if (!pending && (/^\s*#/.test(raw) || !raw.trim())) return;
    if (!pending) startLine = index + 1;
    if (raw.endsWith("\\")) {
      pending += `${raw.slice(0, -1)} `;
      return;
    }
    const whole = (pending + raw).trim();
    pending = "";
    const [keyword = "", ...rest] = whole.split(/\s+/);
    if (!KNOWN.has(keyword.toUpperCase())) {
      throw new BuildRefused(400, `dockerfile parse error line ${startLine}: unknown instruction: ${keyword.toUpperCase()}`);
    }
    out.push({ line: startLine, keyword: keyword.toUpperCase(), args: rest.join(" "), text: whole });
  });
  return out;
}

/** JSON array form (`["a","b"]`) or shell form (`/bin/sh -c "<text>"`). */
export function commandOf(args: string): string[] {
  if (args.trim().startsWith("[")) {
    try {
      const parsed = JSON.parse(args) as unknown;
      if (Array.isArray(parsed) && parsed.every((a) => typeof a === "string")) return parsed;
    } catch {
      // Docker treats an invalid JSON array as shell form too.
    }
  }
  return ["/bin/sh", "-c", args];
}

export function newImageId(): string {
  return `sha256:${randomBytes(32).toString("hex")}`;
}

/** Path inside the image/context without leading `/` or `./`, with `.` and `..` resolved. */
export function normalize(path: string): string {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (!part || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return parts.join("/");
}

/** Docker's message for a RUN step, or the seconds a `sleep` in it waits. */
export function evaluateRun(argv: string[]): { failure?: string; sleepSeconds: number } {
  const script = argv.length === 3 && /(^|\/)sh$/.test(argv[0]!) && argv[1] === "-c" ? argv[2]! : argv.join(" ");
  let sleepSeconds = 0;
  for (const simple of script.split(/;|&&|\n/)) {
    const words = simple.trim().split(/\s+/).filter(Boolean);
    if (words[0] && /(^|\/)busybox$/.test(words[0])) words.shift();
    const [command, arg] = words;
    const code = command === "false" ? 1 : command === "exit" ? Number(arg ?? 0) : 0;
    if (code) return { failure: `The command '${argv.join(" ")}' returned a non-zero code: ${code}`, sleepSeconds };
    if (command === "sleep") sleepSeconds += Number(arg) || 0;
  }
  return { sleepSeconds };
}

/** A build message as Docker's legacy builder writes it (one JSON object per line). */
export type BuildMessage = Record<string, unknown>;

/**
 * Checks the context and build file; throws BuildRefused as Docker does before any output
 * (500 for a missing build file, 400 for a parse error).
 */
export function prepareBuild(context: Uint8Array, dockerfile: string): { files: Map<string, FakeFile>; steps: Instruction[] } {
  const files = readTar(context);
  const file = files.get(normalize(dockerfile));
  if (!file || file.type !== "file") throw new BuildRefused(500, `Cannot locate specified Dockerfile: ${dockerfile}`);
  return { files, steps: parseDockerfile(new TextDecoder().decode(file.data)) };
}

/** Runs the steps, yielding Docker's messages; returns the image, or undefined when a step failed. */
export async function* runSteps(
  context: Map<string, FakeFile>,
  steps: Instruction[],
  tag: string,
  findImage: (ref: string) => FakeImage | undefined,
): AsyncGenerator<BuildMessage, FakeImage | undefined> {
  const image: FakeImage = { id: "", tags: [tag], files: new Map(), env: {}, exposedPorts: [], cmd: [], entrypoint: [], labels: {} };
  let workdir = "";
  for (const [index, step] of steps.entries()) {
    yield { stream: `Step ${index + 1}/${steps.length} : ${step.text}` };
    yield { stream: "\n" };
    const args = step.args;
    switch (step.keyword) {
      case "FROM": {
        // A base the fake built lends its files; any other base (scratch, node:20) starts empty.
        const base = findImage(args.split(/\s+/)[0] ?? "");
        if (base) Object.assign(image, { files: new Map(base.files), env: { ...base.env }, cmd: base.cmd, entrypoint: base.entrypoint });
        break;
      }
      case "COPY":
      case "ADD": {
        const missing = copyInto(image.files, context, args, workdir);
        if (missing !== undefined) {
          const message = `COPY failed: file not found in build context or excluded by .dockerignore: stat ${missing}: file does not exist`;
          yield { errorDetail: { message }, error: message };
          return undefined;
        }
        break;
      }
      case "RUN": {
        yield { stream: ` ---> Running in ${newImageId().slice(7, 19)}\n` };
        const { failure, sleepSeconds } = evaluateRun(commandOf(args));
        if (sleepSeconds > 0) await new Promise((resolve) => setTimeout(resolve, sleepSeconds * 1000));
        if (failure) {
          yield { errorDetail: { code: 1, message: failure }, error: failure };
          return undefined;
        }
        break;
      }
      case "ENV":
      case "LABEL":
        Object.assign(step.keyword === "ENV" ? image.env : image.labels, keyValues(args));
        break;
      case "EXPOSE":
        for (const port of args.split(/\s+/).filter(Boolean)) image.exposedPorts.push(port.includes("/") ? port : `${port}/tcp`);
        break;
      case "CMD":
        image.cmd = commandOf(args);
        break;
      case "ENTRYPOINT":
        image.entrypoint = commandOf(args);
        break;
      case "WORKDIR":
        workdir = normalize(args.startsWith("/") ? args : `${workdir}/${args}`);
        break;
    }
    yield { stream: ` ---> ${newImageId().slice(7, 19)}\n` };
  }
  image.id = newImageId();
  yield { aux: { ID: image.id } };
  yield { stream: `Successfully built ${image.id.slice(7, 19)}\n` };
  yield { stream: `Successfully tagged ${tag}\n` };
  return image;
}

/** COPY/ADD `[--flags] src... dest`; returns the first source that is not in the context. */
function copyInto(target: Map<string, FakeFile>, context: Map<string, FakeFile>, args: string, workdir: string): string | undefined {
  const words = commandOf(args)[0] === "/bin/sh" ? args.split(/\s+/).filter((w) => w && !w.startsWith("--")) : commandOf(args);
  const dest = words.pop() ?? ".";
  const destPath = normalize(dest.startsWith("/") ? dest : `${workdir}/${dest}`);
  const intoDir = dest.endsWith("/") || dest === "." || words.length > 1;
  for (const src of words) {
    const from = normalize(src);
    const single = context.get(from);
    if (single && single.type !== "dir") {
      target.set(intoDir ? normalize(`${destPath}/${from.split("/").pop()}`) : destPath, single);
      continue;
    }
    const inside = [...context].filter(([path]) => from === "" || path.startsWith(`${from}/`));
    if (!single && inside.length === 0) return src;
    for (const [path, file] of inside) target.set(normalize(`${destPath}/${path.slice(from ? from.length + 1 : 0)}`), file);
  }
  return undefined;
}

/** `K=V K2="V 2"` or the legacy `K V` form. */
function keyValues(args: string): Record<string, string> {
  const unquote = (v: string) => v.replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1");
  if (!/^[^\s=]+=/.test(args)) {
    const [key = "", ...rest] = args.split(/\s+/);
    return { [key]: unquote(rest.join(" ")) };
  }
  const out: Record<string, string> = {};
  for (const match of args.matchAll(/([^\s=]+)=("[^"]*"|'[^']*'|\S*)/g)) out[match[1]!] = unquote(match[2]!);
  return out;
}
