/**
 * nginx as the download baseline: started by the bench as the current user on a free loopback
 * port, with a throw-away configuration, pid and log files in a temporary directory, serving one
 * directory from disk.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { freePort } from "../lib/dev-server";

/** A running nginx. */
export interface Nginx {
  /** `http://127.0.0.1:<port>`; a file `name` in the served directory is at `${url}/${name}`. */
  url: string;
  stop: () => Promise<void>;
}

function config(prefix: string, root: string, port: number): string {
  const temp = (name: string) => join(prefix, name);
  return `
# Run by root, nginx would switch its workers to "nobody"; keep the bench's own user either way.
${process.getuid?.() === 0 ? `user ${userInfo().username};` : ""}
worker_processes 1;
pid ${temp("nginx.pid")};
error_log ${temp("error.log")} warn;
events { worker_connections 256; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  types { application/gzip gz; }
  default_type application/octet-stream;
  client_body_temp_path ${temp("client_body")};
  proxy_temp_path ${temp("proxy")};
  fastcgi_temp_path ${temp("fastcgi")};
  uwsgi_temp_path ${temp("uwsgi")};
  scgi_temp_path ${temp("scgi")};
  server {
    listen 127.0.0.1:${port};
    root ${root};
  }
}
`;
}

/** Starts nginx serving `root`; resolves once it answers. */
export async function startNginx(prefix: string, root: string): Promise<Nginx> {
  mkdirSync(prefix, { recursive: true });
  const port = await freePort();
  const conf = join(prefix, "nginx.conf");
  writeFileSync(conf, config(prefix, root, port));
  // Debian installs nginx in /usr/sbin, which a non-root PATH often lacks.
  const binary = existsSync("/usr/sbin/nginx") ? "/usr/sbin/nginx" : "nginx";
  const child = spawn(binary, ["-p", prefix, "-c", conf, "-e", join(prefix, "error.log"), "-g", "daemon off;"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited at start: ${stderr}`);
    try {
      await fetch(url);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`nginx did not answer on ${url}: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { url, stop: () => stop(child) };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((ok) => {
    child.once("exit", () => ok());
    child.kill("SIGQUIT");
  });
}
