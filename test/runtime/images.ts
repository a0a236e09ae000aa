/**
 * The build context the conformance suite (and the workerd smoke test) builds: busybox plus a
 * static page and a CGI script, with Dockerfiles for each behaviour the suite checks.
 * Works in Node and workerd: the busybox bytes are passed in.
 */
import type { TarEntry } from "./tar";

/** Text of `/www/index.html`, which every serving instance returns at `/`. */
export const PAGE_TEXT = "cp-conformance page";
/** A variable the env test passes; its value has a space and an `=` to check `KEY=value` encoding. */
export const GREETING_VAR = "CP_GREETING";
/** Lines the web image's process prints before it starts serving (stdout, then stderr). */
export const STARTED_LINE = "cp-conformance started";
export const STDERR_LINE = "cp-conformance to stderr";
export const EXITING_LINE = "cp-conformance exiting";
export const HUNGRY_LINE = "cp-conformance hungry";

/** Port every conformance image serves on inside the instance. */
export const PORT = 8080;

const httpd = (bind: string) => `exec /bin/busybox httpd -f -p ${bind}:${PORT} -h /www`;
const shell = (script: string) => JSON.stringify(["/bin/busybox", "sh", "-c", script]);
const head = ["FROM scratch", "LABEL cp-conformance=1", "COPY busybox /bin/busybox"];

/** Build files in the context, by role (paths relative to the context root). */
export const DOCKERFILES = {
  /** Serves `/www` on 0.0.0.0, after printing one stdout and one stderr line. */
  web: "Dockerfile",
  /** Serves only on 127.0.0.1 inside the instance: unreachable from outside. */
  loopback: "docker/loopback.Dockerfile",
  /** Fails at `RUN ["/bin/busybox","false"]`. */
  failing: "docker/failing.Dockerfile",
  /** Prints a line and exits with code 3 at once. */
  exiting: "docker/exiting.Dockerfile",
  /** Prints a line, then reads /dev/zero into memory until the kernel's OOM killer ends it. */
  hungry: "docker/hungry.Dockerfile",
} as const;

/** The `Step N/M : ...` text of the failing step (without the `Step N/M : ` part). */
export const FAILING_INSTRUCTION = 'RUN ["/bin/busybox","false"]';

/** The context's entries; `busybox` is the binary's bytes (or stand-in bytes for the fake). */
export function conformanceContext(busybox: Uint8Array): TarEntry[] {
  const dockerfile = (lines: string[]) => `${[...head, ...lines].join("\n")}\n`;
  const serve = (bind: string) => ["COPY www /www", `EXPOSE ${PORT}`, `CMD ${shell(`echo ${STARTED_LINE}; echo ${STDERR_LINE} >&2; ${httpd(bind)}`)}`];
  return [
    { name: "busybox", data: busybox, mode: 0o755 },
    { name: "www", type: "dir" },
    { name: "www/index.html", data: `${PAGE_TEXT}\n` },
    { name: "www/cgi-bin", type: "dir" },
    {
      name: "www/cgi-bin/env",
      mode: 0o755,
      data: [
        "#!/bin/busybox sh",
        // busybox httpd passes CGI headers through as written, and HTTP clients require CRLF.
        "printf 'Content-Type: text/plain\\r\\n\\r\\n'",
        `echo "${GREETING_VAR}=\${${GREETING_VAR}}"`,
        'echo "PORT=${PORT-unset}"',
        "",
      ].join("\n"),
    },
    { name: "docker", type: "dir" },
    { name: DOCKERFILES.web, data: dockerfile(serve("0.0.0.0")) },
    { name: DOCKERFILES.loopback, data: dockerfile(serve("127.0.0.1")) },
    { name: DOCKERFILES.failing, data: dockerfile([FAILING_INSTRUCTION, `CMD ${shell(httpd("0.0.0.0"))}`]) },
    { name: DOCKERFILES.exiting, data: dockerfile([`CMD ${shell(`echo ${EXITING_LINE}; exit 3`)}`]) },
    // `tail` keeps the whole last "line" in memory, and /dev/zero has no newline.
    { name: DOCKERFILES.hungry, data: dockerfile([`CMD ${shell(`echo ${HUNGRY_LINE}; exec /bin/busybox tail /dev/zero`)}`]) },
  ];
}

/**
 * The swarm report's probe image (SWARM_PROBE_IMAGE): busybox as `/bin/cat`, which it then runs as
 * `cat` (busybox picks its applet by the name it is called by).
 */
export function probeContext(busybox: Uint8Array): TarEntry[] {
  return [
    { name: "cat", data: busybox, mode: 0o755 },
    { name: "Dockerfile", data: "FROM scratch\nCOPY cat /bin/cat\n" },
  ];
}
