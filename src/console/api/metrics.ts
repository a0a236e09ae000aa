import { Hono } from "hono";
import { type PlanId, planLimits } from "../../apps/plans";
import { getOwnedApp } from "../../apps/store";
import type { AppEnv } from "../../http/context";
import { ApiError } from "../../http/errors";
import { appMetrics } from "../../metrics/app-metrics";
import { fillPoints, parseMetricsQuery } from "../../metrics/series";

/**
 * `GET /console/api/apps/{id}/metrics?from=&to=&step=` (docs/metrics.md, "JSON route"):
 * `{from, to, step_seconds, memory_limit_bytes, cpu_limit, points}`, one point per step, oldest
 * first, zeros where nothing happened. A bad parameter answers 400 `INVALID_REQUEST` naming it;
 * another account's app answers 404 like a missing one.
 */
export const metricsRoutes = new Hono<AppEnv>().get("/:id/metrics", async (c) => {
  const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id"));
  const parsed = parseMetricsQuery({ from: c.req.query("from"), to: c.req.query("to"), step: c.req.query("step") }, Math.floor(c.get("deps").now() / 1000));
  if (!parsed.ok) throw new ApiError("INVALID_REQUEST", `${parsed.field}: ${parsed.message}`, { extra: { field: parsed.field } });
  const { query } = parsed;
  const rows = await appMetrics(c.env, app.id).rows(app.id, query);
  const limits = planLimits(app.plan as PlanId);
  return c.json(
    {
      from: new Date(query.from * 1000).toISOString(),
      to: new Date(query.to * 1000).toISOString(),
      step_seconds: query.step,
      memory_limit_bytes: limits.memoryBytes,
      cpu_limit: limits.cpus,
      points: fillPoints(query, rows),
    },
    200,
    { "Cache-Control": "no-store" },
  );
});
