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
 *   blank line, body); `printf '<format>'` lines add their text with `\r`, `\n`, `\t` escapes.
 */
import { type Server, createServer } from "node:http";
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
        const reply = serveFile(files, plan.httpd!.home, req.url ?? "/", { ...env, REQUEST_METHOD: req.method ?? "GET" });
        res.writeHead(reply.status, reply.headers).end(reply.body);
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

function serveFile(files: Map<string, FakeFile>, home: string, url: string, env: Record<string, string>): Reply {
  const path = normalize(decodeURIComponent(new URL(url, "http://fake").pathname));
  const full = normalize(`${home}/${path}`);
  const direct = files.get(full);
  const found = direct?.type === "file" ? direct : files.get(normalize(`${full}/index.html`));
  if (!found || found.type !== "file") return { status: 404, headers: { "Content-Type": "text/html" }, body: "<HTML><HEAD><TITLE>404 Not Found</TITLE></HEAD>\n" };
  if (path.startsWith("cgi-bin/")) return cgi(new TextDecoder().decode(found.data), env);
  const type = direct?.type === "file" && !/\.html?$/.test(full) ? "application/octet-stream" : "text/html";
  return { status: 200, headers: { "Content-Type": type }, body: found.data };
}

/**
 * The script's `echo` lines (expanded, newline added) and `printf` lines (one format argument,
 * `\r` `\n` `\t` escapes, no newline added), split as CGI output into headers and body.
 */
function cgi(script: string, env: Record<string, string>): Reply {
  const output = script
    .split("\n")
    .map((line) => /^\s*(echo|printf)(?:\s+(.*))?$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map(([, command, args = ""]) => (command === "echo" ? `${expand(args, env)}\n` : unescape(expand(args, env))))
    .join("");
  const blank = /\r?\n\r?\n/.exec(output);
  const cut = blank ? blank.index : -1;
  const head = cut >= 0 ? output.slice(0, cut) : "";
  const headers: Record<string, string> = {};
  let status = 200;
  for (const line of head.split(/\r?\n/).filter(Boolean)) {
    const [name = "", ...rest] = line.split(":");
    if (name.toLowerCase() === "status") status = parseInt(rest.join(":"), 10) || 200;
    else headers[name] = rest.join(":").trim();
  }
  return { status, headers, body: blank ? output.slice(blank.index + blank[0].length) : output };
}

function unescape(format: string): string {
  return format.replace(/\\([rnt\\])/g, (_, c: string) => ({ r: "\r", n: "\n", t: "\t" })[c] ?? c);
}
