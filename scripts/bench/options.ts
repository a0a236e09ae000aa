/** The bench's command-line flags. */
import { parseArgs } from "node:util";
import { SHAPES, type Shape } from "./shapes";

/** What one bench run measures and where it writes. */
export interface BenchOptions {
  /** Raw data sizes of the exported databases, bytes, ascending. */
  sizes: number[];
  /** Dataset shapes exported: `mixed` at each of `sizes`, the others at their own scale (shapes.ts). */
  shapes: Shape[];
  /** Runs per figure; the table shows their median, min and max. */
  runs: number;
  /** Concurrent clients of the latency measurements. */
  clients: number;
  /** Polls and /healthz requests each client sends per latency run. */
  requests: number;
  /** Export starts each client sends per latency run (each on a database of its own). */
  starts: number;
  out: string;
  /** Keep the temporary directory (databases, archives, wrangler state) for inspection. */
  keep: boolean;
  quick: boolean;
  /** Run only the apps benchmark (deploy to live, requests per second through the proxy). */
  apps: boolean;
  /** Deploys through the Worker, and builds with the Docker CLI, measured with --apps. */
  appDeploys: number;
  /** Requests per load run with --apps (each side, each run). */
  appRequests: number;
  /** Concurrent clients of the load runs with --apps. */
  appClients: number;
  /** Run only the rebuild benchmark (redeploy to live with one file changed, cache warm). */
  rebuild: boolean;
  /** RUNTIME_BUILDER values the rebuild benchmark measures the Worker with, one wrangler dev each. */
  builders: ("auto" | "buildkit" | "classic")[];
  /** Only the request rows against the floor Worker (--floor). */
  floorOnly: boolean;
  /** Skip the request rows in a full run (--no-requests). */
  noRequests: boolean;
  /** wrk's connections and seconds per run for the request rows. */
  wrkConnections: number;
  wrkSeconds: number;
  /** Leave wrangler's local trace recording on (its default) in every wrangler dev the bench starts. */
  localTraces: boolean;
}

export const USAGE = `Usage: npm run bench -- [flags]

  --quick            a check that the bench works, in under 3 minutes: one small size (8MB), one
                     run per figure, 10 clients, 2 s wrk runs, one runtime throughout (no fresh
                     one before each memory figure) and no metrics-off pass; not for the figures
  --sizes LIST       raw data sizes of the mixed dataset, e.g. 50MB,200MB,1GB (the default; 8MB with --quick)
  --shapes LIST      dataset shapes to export (default mixed): mixed (accounts, events, documents at
                     each of --sizes), narrow (2,000,000 rows of an integer, a short text and a REAL),
                     wide (2,000 rows of ~50 KB text), blobs (2,000 rows of ~50 KB BLOB); a tenth
                     of the rows with --quick. e.g. --shapes mixed,narrow,wide,blobs
  --runs N           runs per figure (default 3; 1 with --quick); the table shows median [min-max]
  --clients N        concurrent clients for start/poll latency (default 50; 10 with --quick)
  --requests N       polls (and /healthz requests) per client per latency run (default 40; 10 with --quick)
  --starts N         export starts per client per latency run, each on its own database (default 4; 1 with --quick)
  --out PATH         where the JSON goes (default bench/results.json; bench/apps-results.json with --apps)
  --keep             keep the temporary directory with databases, archives and wrangler state
  --help             this text

  --floor            only the request rows, in a few minutes: /healthz, an app through the proxy
                     (needs dockerd and /bin/busybox; left out without them), polls of a signed link
                     (pending 503, ready 200) and start export under --clients clients, each against
                     a trivial Hono Worker under the same wrangler dev (the floor)
  --no-requests      a full run without the request rows
  --wrk-connections N  wrk connections for the request rows (default 20)
  --wrk-seconds N    seconds per wrk run (default 8; 2 with --quick)
  --local-traces     leave wrangler's local trace recording on (X_LOCAL_OBSERVABILITY, on by default
                     in wrangler dev), on both sides; the bench turns it off unless given this flag

  --apps             only the apps benchmark, in about 2 minutes (needs dockerd at /var/run/docker.sock
                     and /bin/busybox): Deploy to live through the Worker against git archive + docker
                     build + docker run + first answer with the Docker CLI, and requests per second
                     through the Worker's proxy against the same container reached directly
  --app-deploys N    deploys measured on each side with --apps (default 5)
  --app-requests N   requests per load run with --apps (default 2000; --runs load runs per side)
  --app-clients N    concurrent clients of the load runs with --apps (default 20)

  --rebuild          only the rebuild benchmark (needs dockerd and /bin/busybox): redeploy to live of
                     an app whose last commit changed one file, cache warm, against git archive +
                     docker build + docker run + first answer of the same commit; --app-deploys rounds
  --builders LIST    RUNTIME_BUILDER values measured with --rebuild (default auto,buildkit)
`;

const UNITS: Record<string, number> = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9 };

/** `50MB` -> 50_000_000 (decimal units, like the MB/s figures). */
export function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB)$/i.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a size; write e.g. 50MB or 1GB`);
  return Math.round(Number(match[1]) * UNITS[match[2]!.toUpperCase()]!);
}

/** 50_000_000 -> `50 MB`. */
export function formatSize(bytes: number): string {
  return bytes >= 1e9 ? `${+(bytes / 1e9).toFixed(2)} GB` : `${+(bytes / 1e6).toFixed(1)} MB`;
}

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} takes a whole number of at least 1, got "${text}"`);
  return n;
}

/** Parses the flags; throws with a sentence naming the bad flag. Returns null for --help. */
export function parseOptions(argv: string[]): BenchOptions | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      sizes: { type: "string" },
      shapes: { type: "string" },
      runs: { type: "string" },
      clients: { type: "string" },
      requests: { type: "string" },
      starts: { type: "string" },
      out: { type: "string" },
      keep: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
      apps: { type: "boolean", default: false },
      "app-deploys": { type: "string" },
      "app-requests": { type: "string" },
      "app-clients": { type: "string" },
      rebuild: { type: "boolean", default: false },
      builders: { type: "string" },
      floor: { type: "boolean", default: false },
      "no-requests": { type: "boolean", default: false },
      "wrk-connections": { type: "string" },
      "wrk-seconds": { type: "string" },
      "local-traces": { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) return null;
  const sizes = (values.sizes ?? (values.quick ? "8MB" : "50MB,200MB,1GB")).split(",").map(parseSize).sort((a, b) => a - b);
  const shapes = (values.shapes ?? "mixed").split(",").map((name) => {
    if (!(SHAPES as readonly string[]).includes(name)) throw new Error(`--shapes takes ${SHAPES.join(", ")}; got "${name}"`);
    return name as Shape;
  });
  return {
    sizes,
    shapes,
    runs: positive("runs", values.runs, values.quick ? 1 : 3),
    clients: positive("clients", values.clients, values.quick ? 10 : 50),
    requests: positive("requests", values.requests, values.quick ? 10 : 40),
    starts: positive("starts", values.starts, values.quick ? 1 : 4),
    out: values.out ?? (values.rebuild ? "bench/rebuild-results.json" : values.apps ? "bench/apps-results.json" : values.floor ? "bench/floor-results.json" : "bench/results.json"),
    keep: values.keep!,
    quick: values.quick!,
    apps: values.apps!,
    rebuild: values.rebuild!,
    builders: (values.builders ?? "auto,buildkit").split(",").map((b) => {
      if (!["auto", "buildkit", "classic"].includes(b)) throw new Error(`--builders takes auto, buildkit, classic; got "${b}"`);
      return b as "auto" | "buildkit" | "classic";
    }),
    appDeploys: positive("app-deploys", values["app-deploys"], 5),
    appRequests: positive("app-requests", values["app-requests"], 2000),
    appClients: positive("app-clients", values["app-clients"], 20),
    floorOnly: values.floor!,
    noRequests: values["no-requests"]!,
    wrkConnections: positive("wrk-connections", values["wrk-connections"], 20),
    wrkSeconds: positive("wrk-seconds", values["wrk-seconds"], values.quick ? 2 : 8),
    localTraces: values["local-traces"]!,
  };
}
