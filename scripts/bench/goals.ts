/**
 * The performance goals, each judged from the rows of the run that measured it: met, not met, or
 * not measured in this run (with the flag that measures it). `npm run bench` prints these lines
 * under its table and writes them to the JSON report.
 */
import type { ResultRow } from "./report";

/** The plain proxy row: the busybox httpd app through the proxy (request-phase.ts). */
export const PROXY_SUBJECT = "App through the proxy (busybox httpd)";
/** The proxy with metrics collection on against a second control plane with it off, in turns (in-turns.ts). */
export const METRICS_COST_SUBJECT = "App through the proxy, metrics collection on against off";

/** The proxy row whose reply sets a cookie for every app, which the cookie rule rewrites (request-phase.ts). */
export const COOKIE_SUBJECT = "App through the proxy, a reply setting a cookie for every app (CGI)";
/** That CGI against the same CGI without the cookie, both through the proxy, in turns (in-turns.ts). */
export const COOKIE_COST_SUBJECT = "App through the proxy, the cookie CGI against the same CGI without the cookie";

export interface GoalLine {
  goal: string;
  verdict: "met" | "not met" | "not measured";
  /** The figures the verdict rests on. */
  detail: string;
}

const fixed = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "-");

/**
 * A goal over the rows `pick` finds: not met when one fails `holds`; met when all pass and every
 * subject the goal names (`required`, prefixes of the row subjects) was measured; else not measured.
 */
function judge(
  goal: string,
  rows: ResultRow[],
  pick: (r: ResultRow) => boolean,
  holds: (r: ResultRow) => boolean,
  show: (r: ResultRow) => string,
  missing: string,
  required: string[] = [],
): GoalLine {
  const found = rows.filter(pick);
  if (found.length === 0) return { goal, verdict: "not measured", detail: missing };
  const detail = found.map(show).join("; ");
  if (!found.every(holds)) return { goal, verdict: "not met", detail };
  const absent = required.filter((subject) => !found.some((r) => r.subject.startsWith(subject)));
  if (absent.length > 0) return { goal, verdict: "not measured", detail: `${detail}; not measured: ${absent.join(", ")}` };
  return { goal, verdict: "met", detail };
}

/** Every goal of the request path, exports and memory, judged from one run's rows. */
export function judgeGoals(rows: ResultRow[]): GoalLine[] {
  const requestsPerSecond = (subject: string) => (r: ResultRow) => r.subject.startsWith(subject) && r.metric.startsWith("requests/s") && r.floorRatio !== undefined;
  const floorGoal = (goal: string, subject: string, missing: string) =>
    judge(goal, rows, requestsPerSecond(subject), (r) => r.floorRatio! >= 0.9, (r) => `${r.subject}: ${fixed(r.floorRatio!)} of the floor`, missing);
  return [
    floorGoal("/healthz at 0.9 or more of the floor's requests/s", "/healthz", "run `npm run bench` or `--floor`"),
    floorGoal("App through the proxy at 0.9 or more of the floor's requests/s", "App through the proxy", "needs dockerd and /bin/busybox"),
    floorGoal("Poll of a signed link at 0.9 or more of the floor's requests/s (pending and ready)", "Poll of a signed link", "run `npm run bench` or `--floor`"),
    metricsCostGoal(rows),
    cookieRuleGoal(rows),
    judge(
      "Start export p50 under 50 clients at most 2x our /healthz",
      rows,
      (r) => r.subject.startsWith("Start export of an empty database (") && r.baselineName.startsWith("our /healthz"),
      (r) => r.ratio <= 2,
      (r) => `${fixed(r.ratio)}x /healthz`,
      "run `npm run bench` or `--floor`",
    ),
    judge(
      "Export at 0.9 or more of the native pipeline's speed on every dataset shape (mixed, narrow, wide, blobs)",
      rows,
      // Against the native pipeline only (the rows with a steady writer compare against no writer).
      (r) => r.subject.startsWith("Export ") && r.metric.startsWith("throughput") && r.baselineName.startsWith("sqlite3"),
      (r) => r.ratio >= 0.9,
      (r) => `${r.subject.slice("Export ".length)}: ${fixed(r.ratio)}`,
      "run `npm run bench` (`--shapes mixed,narrow,wide,blobs`)",
      ["Export narrow", "Export wide", "Export blobs"],
    ),
    judge(
      "Worker isolate at 64 MB or less during export and download of 50 MB, 200 MB and 1 GB",
      rows,
      (r) => r.subject.startsWith("Isolate "),
      (r) => r.worker.max <= 64,
      (r) => `${r.subject.slice("Isolate ".length)} ${r.metric.includes("download") ? "download" : "export"}: ${r.worker.max.toFixed(0)} MB`,
      "run `npm run bench`",
      ["Isolate 50 MB", "Isolate 200 MB", "Isolate 1 GB"],
    ),
  ];
}

/**
 * A goal read from a pass in turns (in-turns.ts): its requests/s row's ratio of the medians, side
 * `a` against side `b`, at 0.95 or more.
 */
function inTurnsGoal(rows: ResultRow[], goal: string, subject: string, sides: [string, string], missing: string): GoalLine {
  const found = rows.find((r) => r.subject === subject && r.metric.startsWith("requests/s"));
  if (!found) return { goal, verdict: "not measured", detail: missing };
  const detail = `${fixed(found.ratio)} (${sides[0]} ${found.worker.median.toFixed(0)} requests/s, ${sides[1]} ${found.baseline.median.toFixed(0)})`;
  return { goal, verdict: found.ratio >= 0.95 ? "met" : "not met", detail };
}

/** docs/metrics.md: the proxy with metrics collection on at 0.95 or more of the same build with it off. */
const metricsCostGoal = (rows: ResultRow[]) =>
  inTurnsGoal(
    rows,
    "Metrics collection on: the app through the proxy at 0.95 or more of its requests/s with collection off",
    METRICS_COST_SUBJECT,
    ["on", "off"],
    "needs dockerd and /bin/busybox (`npm run bench` or `--floor`, not `--quick`)",
  );

/**
 * README, "What we enforce" (cookies stay with their app): the proxy's cookie rule costs no request
 * rate beyond noise: the CGI whose cookie the rule rewrites against the same CGI without the cookie.
 */
const cookieRuleGoal = (rows: ResultRow[]) =>
  inTurnsGoal(
    rows,
    "Cookie rule: a reply whose cookie the proxy rewrites at 0.95 or more of the same reply without the cookie",
    COOKIE_COST_SUBJECT,
    ["with the cookie", "without"],
    "needs dockerd and /bin/busybox (`npm run bench` or `--floor`)",
  );

/** The goal lines as printed under the table. */
export function renderGoals(goals: GoalLine[]): string[] {
  return ["Goals:", ...goals.map((g) => `  ${g.verdict === "met" ? "met         " : g.verdict === "not met" ? "NOT MET     " : "not measured"}  ${g.goal} (${g.detail})`)];
}
