import { type PlanId, planLimits } from "../../apps/plans";
import { type AppRow, deploysFinishedSince } from "../../apps/store";
import { appMetrics } from "../../metrics/app-metrics";
import { type ChartEvent, deployMarkerKind } from "../../metrics/chart-markers";
import { type MetricsQuery, type Point, fillPoints, parseMetricsQuery } from "../../metrics/series";
import type { Caller } from "./caller";
import { type Refusal, refuse } from "./outcome";

/**
 * An app's metrics (docs/metrics.md), for the JSON route (api/metrics.ts) and the Metrics tab
 * (pages/metrics-page.tsx): one point per step, oldest first, zeros where nothing happened, with
 * the plan's limits; and the events the tab marks on its charts.
 */

export interface MetricsSeries {
  from: string;
  to: string;
  step_seconds: number;
  memory_limit_bytes: number;
  cpu_limit: number;
  points: Point[];
}

/** A bad parameter, named (`from`, `to` or `step`). */
export interface BadMetricsParameter extends Refusal {
  field: "from" | "to" | "step";
}

/** The series over `from`, `to`, `step` (text as given; defaults: the last hour by minute). */
export async function readMetrics(caller: Caller, app: AppRow, params: { from?: string; to?: string; step?: string }): Promise<{ ok: true; query: MetricsQuery; series: MetricsSeries } | BadMetricsParameter> {
  const parsed = parseMetricsQuery(params, Math.floor(caller.deps.now() / 1000));
  if (!parsed.ok) return { ...refuse("INVALID_REQUEST", parsed.message), field: parsed.field };
  const { query } = parsed;
  const rows = await appMetrics(caller.env, app.id).rows(app.id, query);
  const limits = planLimits(app.plan as PlanId);
  const series = {
    from: new Date(query.from * 1000).toISOString(),
    to: new Date(query.to * 1000).toISOString(),
    step_seconds: query.step,
    memory_limit_bytes: limits.memoryBytes,
    cpu_limit: limits.cpus,
    points: fillPoints(query, rows),
  };
  return { ok: true, query, series };
}

/** Deploys when they went live or failed, the control plane's last restart, and the engine's restarts of the process (crashes). */
export async function chartEvents(caller: Caller, app: AppRow, query: MetricsQuery, points: Point[]): Promise<ChartEvent[]> {
  const deploys = await deploysFinishedSince(caller.env, app.id, query.from * 1000);
  return [
    ...deploys.flatMap((d) => {
      const kind = deployMarkerKind(d.status, d.kind);
      return kind && d.finishedAt !== null ? [{ at: d.finishedAt, kind }] : [];
    }),
    ...(app.lastRestart ? [{ at: app.lastRestart.at, kind: "restart" as const }] : []),
    ...points.map((p) => ({ at: Date.parse(p.at), kind: "crash" as const, count: p.restarts })),
  ];
}
