import { Hono } from "hono";
import type { AppView } from "../../apps/views";
import type { AppEnv } from "../../http/context";
import { HEIGHT, WIDTH, lineSegments, niceCeiling } from "../../metrics/chart";
import { type Marker, chartMarkers } from "../../metrics/chart-markers";
import type { Point } from "../../metrics/series";
import { callerOf } from "../actions/caller";
import { chartEvents, readMetrics } from "../actions/metrics";
import { appPath, ownedApp, viewOf } from "./app-tab-pages";
import { AppFrame } from "./app-tabs";
import { type Flash, takeFlash } from "./flash";
import { formatBytes } from "./format";
import { ChartMarkers, EventsTable, MarkerLegend } from "./metrics-markers";
import { loadViewer, render, type Viewer } from "./layout";

/** The ranges the page offers: the last hour by minute, the last day and week by hour. */
const RANGES = { "1h": { label: "Last hour", step: 60, seconds: 3600 }, "24h": { label: "24 hours", step: 3600, seconds: 86400 }, "7d": { label: "7 days", step: 3600, seconds: 7 * 86400 } } as const;
type Range = keyof typeof RANGES;
/** How often the console script draws the charts again. */
const REFRESH_SECONDS = 15;

interface Series {
  name: string;
  values: (number | null)[];
  color: string;
}

interface ChartProps {
  id: string;
  title: string;
  unit: (v: number) => string;
  series: Series[];
  /** A limit drawn as a dashed line (the plan's memory or CPUs). */
  limit?: { value: number; label: string };
  labels: string[];
  /** Deploys, rollbacks, restarts and crashes in the range (src/metrics/chart-markers.ts). */
  markers: Marker[];
}

/** One chart: an SVG with a title for screen readers, and the same numbers as a table. */
function Chart(props: ChartProps) {
  const top = niceCeiling(Math.max(props.limit?.value ?? 0, ...props.series.flatMap((s) => s.values.filter((v): v is number => v !== null))));
  const n = props.labels.length;
  return (
    <section class="metric-chart" id={`chart-${props.id}`} aria-labelledby={`${props.id}-title`}>
      <h2 id={`${props.id}-title`}>{props.title}</h2>
      <svg viewBox={`-50 -10 ${WIDTH + 60} ${HEIGHT + 30}`} role="img" aria-labelledby={`${props.id}-svg-title`} width="100%" data-width={WIDTH} data-height={HEIGHT} data-points={n}>
        <title id={`${props.id}-svg-title`}>{`${props.title}: ${props.series.map((s) => s.name).join(", ")}, scale 0 to ${props.unit(top)}`}</title>
        <line x1="0" y1={HEIGHT} x2={WIDTH} y2={HEIGHT} stroke="#8c959f" />
        <text x="-6" y={HEIGHT} text-anchor="end" font-size="11" fill="#57606a">0</text>
        <text x="-6" y="4" text-anchor="end" font-size="11" fill="#57606a">{props.unit(top)}</text>
        {props.limit ? <line x1="0" y1={HEIGHT - (props.limit.value / top) * HEIGHT} x2={WIDTH} y2={HEIGHT - (props.limit.value / top) * HEIGHT} stroke="#cf222e" stroke-dasharray="4 4" /> : null}
        <ChartMarkers markers={props.markers} />
        {props.series.map((s) =>
          lineSegments(s.values, top).map((points) => {
            // A lone point has no line to draw: it is shown as a dot.
            if (points.includes(" ")) return <polyline points={points} fill="none" stroke={s.color} stroke-width="2" />;
            const [cx, cy] = points.split(",");
            return <circle cx={cx} cy={cy} r="3" fill={s.color} />;
          }),
        )}
        <text x="0" y={HEIGHT + 16} font-size="11" fill="#57606a">{props.labels[0] ?? ""}</text>
        <text x={WIDTH} y={HEIGHT + 16} text-anchor="end" font-size="11" fill="#57606a">{props.labels[n - 1] ?? ""}</text>
      </svg>
      <p class="legend">
        {props.series.map((s) => (
          <span><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill={s.color} /></svg> {s.name} </span>
        ))}
        {props.limit ? <span>– – {props.limit.label} </span> : null}
        <MarkerLegend markers={props.markers} />
      </p>
      <details>
        <summary>{`${props.title} as a table`}</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Time (UTC)</th>
              {props.series.map((s) => (
                <th scope="col">{s.name}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.labels.map((label, i) => (
              <tr>
                <th scope="row">{label}</th>
                {props.series.map((s) => (
                  <td>{s.values[i] === null ? "–" : props.unit(s.values[i]!)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </section>
  );
}

interface MetricsPageProps {
  viewer: Viewer;
  app: AppView;
  flash?: Flash | null;
  range: Range;
  points: Point[];
  memoryLimit: number;
  cpuLimit: number;
  markers: Marker[];
}

export function MetricsPage(props: MetricsPageProps) {
  const step = RANGES[props.range].step;
  const labels = props.points.map((p) => (step === 60 ? p.at.slice(11, 16) : `${p.at.slice(5, 10)} ${p.at.slice(11, 16)}`));
  const common = { labels, markers: props.markers };
  const count = (v: number) => String(Math.round(v));
  return (
    <AppFrame viewer={props.viewer} app={props.app} tab="metrics" flash={props.flash}>
      <nav aria-label="Time range" class="ranges">
        {(Object.keys(RANGES) as Range[]).map((r, i) => (
          <>
            {i > 0 ? " · " : ""}
            <a href={`${appPath(props.app.id)}/metrics?range=${r}`} aria-current={r === props.range ? "page" : undefined}>{RANGES[r].label}</a>
          </>
        ))}
      </nav>
      <p>Deploys, rollbacks, restarts and crashes are marked on the charts with dashed lines and a symbol, and listed under the charts. Times are UTC.</p>
      {/* The console script fetches the page again every 15 s and swaps in the charts, and reads out the point under the pointer. */}
      <div id="metrics" data-metrics-refresh={REFRESH_SECONDS}>
        <Chart id="requests" title="Requests by status" unit={count} {...common} series={[
          { name: "2xx", values: props.points.map((p) => p.requests["2xx"] + p.requests["3xx"]), color: "#1a7f37" },
          { name: "4xx", values: props.points.map((p) => p.requests["4xx"]), color: "#9a6700" },
          { name: "5xx", values: props.points.map((p) => p.requests["5xx"]), color: "#cf222e" },
        ]} />
        <Chart id="latency" title="Response time" unit={(v) => `${Math.round(v)} ms`} {...common} series={[
          { name: "p50", values: props.points.map((p) => p.latency_ms?.p50 ?? null), color: "#0969da" },
          { name: "p95", values: props.points.map((p) => p.latency_ms?.p95 ?? null), color: "#8250df" },
        ]} />
        <Chart id="cpu" title="CPU" unit={(v) => `${Math.round(v)} %`} limit={{ value: 100, label: `plan: ${props.cpuLimit} CPU` }} {...common} series={[
          { name: "CPU, % of the plan", values: props.points.map((p) => p.cpu_percent), color: "#0969da" },
        ]} />
        <Chart id="memory" title="Memory" unit={formatBytes} limit={{ value: props.memoryLimit, label: `plan: ${formatBytes(props.memoryLimit)}` }} {...common} series={[
          { name: "Memory in use", values: props.points.map((p) => p.memory_bytes), color: "#1a7f37" },
        ]} />
        <EventsTable markers={props.markers} step={step} />
      </div>
    </AppFrame>
  );
}

/** `GET /console/apps/{id}/metrics?range=1h|24h|7d`: the four charts, drawn on the server. */
export const metricsPages = new Hono<AppEnv>().get("/:id/metrics", async (c) => {
  const row = await ownedApp(c);
  const asked = c.req.query("range");
  const range: Range = asked && asked in RANGES ? (asked as Range) : "1h";
  const { step, seconds } = RANGES[range];
  const now = Math.floor(c.get("deps").now() / 1000);
  const caller = callerOf(c);
  const read = await readMetrics(caller, row, { from: String(now - seconds + step), to: String(now), step: String(step) });
  if (!read.ok) throw new Error(read.message);
  const { query, series } = read;
  const markers = chartMarkers(await chartEvents(caller, row, query, series.points), { from: query.from, step, points: series.points.length });
  const props = { range, points: series.points, memoryLimit: series.memory_limit_bytes, cpuLimit: series.cpu_limit, markers };
  return render(c, <MetricsPage viewer={await loadViewer(c)} app={await viewOf(c, row, false)} flash={await takeFlash(c)} {...props} />);
});
