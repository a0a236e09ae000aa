/**
 * How the fake engine "runs" an image: it reads the command (ENTRYPOINT + CMD) instead of
 * executing it. Conventions, kept small on purpose:
 * - `busybox` as the first word is dropped (applet call); `sh -c "<script>"` is split on `;`,
 *   `&&` and newlines and each simple command (a leading `exec` ignored) is interpreted:
 *   - `echo words` prints a log line (stdout, or stderr when it ends with `>&2`), `$VAR`,
 *     `${VAR}`, `${VAR-default}` and `${VAR:-default}` expanded from the instance's environment;
 *   - `exit N` ends the process with code N;
 *   - `httpd ... -p [ip:]port -h dir` serves: a real Node HTTP server answers on the published
 *     port when ip is absent or `0.0.0.0` and port is the exposed one; `127.0.0.1` (or another
 *     port) leaves the published port accepting and dropping connections, as Docker's does;
 *   - anything else is ignored.
 * - A command with no `httpd` exits after its echo lines (code from `exit`, else 0).
 * - httpd serves the image's files under `dir` (a directory gives its `index.html`); a file under
 *   `cgi-bin/` is answered with its `echo` lines expanded as above, read as CGI output (headers,
 *   blank line, body); `printf '<format>'` lines add their text with `\r`, `\n`, `\t` escapes;
 *   `sleep N` lines (also `busybox sleep N`) pause the output for N seconds, headers or body, as
 *   the real script would. As busybox httpd does, every request header reaches the script as
 *   `HTTP_<NAME>` (upper case, `-` as `_`).
 */
import { type Server, type ServerResponse, createServer } from "node:http";
import { type Server as NetServer, createServer as createNetServer } from "node:net";
import type { FakeFile } from "./fake-docker-build";
import { normalize } from "./fake-docker-build";

export interface LogLine {
  stream: 1 | 2;
  text: string;
}

export interface ProcessPlan {
  logs: LogLine[];
  httpd?: { host: string; port: number; home: string };
  exitCode: number;
}

/** Reads a command line by the conventions above. */
export function planProcess(argv: string[], env: Record<string, string>): ProcessPlan {
  const words = [...argv];
  if (words[0] && /(^|\/)busybox$/.test(words[0])) words.shift();
  const script = words.length >= 3 && /(^|\/)sh$/.test(words[0]!) && words[1] === "-c" ? words[2]! : words.join(" ");
  const plan: ProcessPlan = { logs: [], exitCode: 0 };
  for (const simple of script.split(/;|&&|\n/)) {
    const parts = simple.trim().replace(/^exec\s+/, "").split(/\s+/).filter(Boolean);
    if (parts[0] && /(^|\/)busybox$/.test(parts[0])) parts.shift();
    const [command, ...args] = parts;
    if (command === "echo") {
      const toStderr = args.at(-1) === ">&2";
      const text = expand(args.slice(0, toStderr ? -1 : undefined).join(" "), env);
      plan.logs.push({ stream: toStderr ? 2 : 1, text: `${text}\n` });
    } else if (command === "exit") {
      plan.exitCode = Number(args[0] ?? 0) || 0;
      break;
    } else if (command === "httpd") {
      plan.httpd = httpdOptions(args);
      break;
    }
  }
  return plan;
}

function httpdOptions(args: string[]): { host: string; port: number; home: string } {
  const option = (flag: string) => {
    const at = args.indexOf(flag);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const bind = option("-p") ?? "80";
  const [host, port] = bind.includes(":") ? [bind.slice(0, bind.lastIndexOf(":")), bind.slice(bind.lastIndexOf(":") + 1)] : ["0.0.0.0", bind];
  return { host, port: Number(port), home: normalize(option("-h") ?? ".") };
}

/** Shell-like expansion of one echo argument list: quotes removed, variables replaced. */
export function expand(words: string, env: Record<string, string>): string {
  const unquoted = words.replace(/'([^']*)'|"([^"]*)"/g, (_, single: string | undefined, double: string | undefined) =>
    single !== undefined ? single.replace(/\$/g, "\u0000") : (double ?? ""),
  );
  return unquoted
    .replace(/\$\{(\w+)(:?-)([^}]*)\}|\$\{(\w+)\}|\$(\w+)/g, (_, a?: string, op?: string, word?: string, b?: string, c?: string) => {
      const value = env[(a ?? b ?? c)!];
      if (op === ":-") return value || (word ?? "");
      if (op === "-") return value ?? word ?? "";
      return value ?? "";
    })
    .replace(/\u0000/g, "$");
}

/** A published port: serving the image's files, or accepting and dropping connections. */
export interface PublishedPort {
  port: number;
  close(): Promise<void>;
}

/**
 * Opens the published port on 127.0.0.1 for one running instance: `hostPort`, or one the system
 * picks when 0. A host port already in use rejects with the engine's "port is already allocated".
 */
export async function publish(
  plan: ProcessPlan,
  containerPort: number,
  files: Map<string, FakeFile>,
  env: Record<string, string>,
  unref: boolean,
  hostPort = 0,
): Promise<PublishedPort> {
  const reachable = plan.httpd && plan.httpd.port === containerPort && (plan.httpd.host === "0.0.0.0" || plan.httpd.host === "");
  const server: Server | NetServer = reachable
    ? createServer((req, res) => {
        const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [`HTTP_${name.toUpperCase().replace(/-/g, "_")}`, String(value)]));
        const reply = serveFile(files, plan.httpd!.home, req.url ?? "/", { ...env, ...headers, REQUEST_METHOD: req.method ?? "GET" });
        if ("steps" in reply) void runCgi(reply.steps, res).catch(() => res.destroy());
        else res.writeHead(reply.status, reply.headers).end(reply.body);
      })
    : createNetServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(error.code === "EADDRINUSE" ? new Error(`Bind for 127.0.0.1:${hostPort} failed: port is already allocated`) : error),
    );
    server.listen(hostPort, "127.0.0.1", resolve);
  });
  if (unref) server.unref();
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : 0,
    close: () =>
      new Promise<void>((resolve) => {
        if ("closeAllConnections" in server) server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array;
}

/** A CGI script's output as it comes: text, and pauses between. */
type CgiStep = { text: string } | { sleepMs: number };

function serveFile(files: Map<string, FakeFile>, home: string, url: string, env: Record<string, string>): Reply | { steps: CgiStep[] } {
  const path = normalize(decodeURIComponent(new URL(url, "http://fake").pathname));
  const full = normalize(`${home}/${path}`);
  const direct = files.get(full);
  const found = direct?.type === "file" ? direct : files.get(normalize(`${full}/index.html`));
  if (!found || found.type !== "file") return { status: 404, headers: { "Content-Type": "text/html" }, body: "<HTML><HEAD><TITLE>404 Not Found</TITLE></HEAD>\n" };
  if (path.startsWith("cgi-bin/")) return { steps: cgiSteps(new TextDecoder().decode(found.data), env) };
  const type = direct?.type === "file" && !/\.html?$/.test(full) ? "application/octet-stream" : "text/html";
  return { status: 200, headers: { "Content-Type": type }, body: found.data };
}

/**
 * The script's `echo` lines (expanded, newline added), `printf` lines (one format argument, `\r`
 * `\n` `\t` escapes, no newline added) and `sleep N` pauses, in order.
 */
function cgiSteps(script: string, env: Record<string, string>): CgiStep[] {
  const steps: CgiStep[] = [];
  for (const line of script.split("\n")) {
    const sleep = /^\s*(?:\S*busybox\s+)?sleep\s+(\d+(?:\.\d+)?)\s*$/.exec(line);
    if (sleep) {
      steps.push({ sleepMs: Number(sleep[1]) * 1000 });
      continue;
    }
    const m = /^\s*(echo|printf)(?:\s+(.*))?$/.exec(line);
    if (m) steps.push({ text: m[1] === "echo" ? `${expand(m[2] ?? "", env)}\n` : unescape(expand(m[2] ?? "", env)) });
  }
  return steps;
}

/**
 * Writes CGI output as it comes: the headers once the blank line after them has been printed
 * (a `Status:` line gives the status), then the body chunk by chunk. Output with no blank line is
 * all body, sent at the end.
 */
async function runCgi(steps: CgiStep[], res: ServerResponse): Promise<void> {
  let pending = "";
  let started = false;
  for (const step of steps) {
    if ("sleepMs" in step) {
      await new Promise((resolve) => setTimeout(resolve, step.sleepMs));
      continue;
    }
    if (started) {
      res.write(step.text);
      continue;
    }
    pending += step.text;
    const blank = /\r?\n\r?\n/.exec(pending);
    if (!blank) continue;
    const { status, headers } = cgiHead(pending.slice(0, blank.index));
    res.writeHead(status, headers);
    res.write(pending.slice(blank.index + blank[0].length));
    started = true;
  }
  if (!started) res.writeHead(200);
  res.end(started ? undefined : pending);
}

function cgiHead(head: string): { status: number; headers: Record<string, string | string[]> } {
  const headers: Record<string, string | string[]> = {};
  let status = 200;
  for (const line of head.split(/\r?\n/).filter(Boolean)) {
    const [name = "", ...rest] = line.split(":");
    const value = rest.join(":").trim();
    const before = headers[name];
    if (name.toLowerCase() === "status") status = parseInt(rest.join(":"), 10) || 200;
    // A header given more than once (Set-Cookie) is sent once per line.
    else headers[name] = before === undefined ? value : [before, value].flat();
  }
  return { status, headers };
}

function unescape(format: string): string {
  return format.replace(/\\([rnt\\])/g, (_, c: string) => ({ r: "\r", n: "\n", t: "\t" })[c] ?? c);
}
