import { createRoute, z } from "@hono/zod-openapi";
import { ApiError } from "../../http/errors";
import { ownedApp } from "../actions/apps";
import { callerOf } from "../actions/caller";
import { readMetrics } from "../actions/metrics";
import { AppIdParams } from "./app-schemas";
import { NO_STORE, SIGNED_IN_REPLIES, consoleRouter, errorReply, jsonReply } from "./openapi";

// The query is read by the action after the app is found (a 404 answers before a bad query's 400,
// which names the parameter in `field` too), so these only document it.
const MetricsQuery = z.object({
  from: z.string().optional().openapi({ description: "ISO 8601 time (UTC) or seconds since the epoch; default: an hour before `to`." }),
  to: z.string().optional().openapi({ description: "ISO 8601 time (UTC) or seconds since the epoch; default: now." }),
  step: z.string().optional().openapi({ description: "`60` or `3600` seconds; default 60." }),
});

const StatusCounts = z.object({ "2xx": z.number().int(), "3xx": z.number().int(), "4xx": z.number().int(), "5xx": z.number().int() });
const PointJson = z.object({
  at: z.string().openapi({ format: "date-time" }),
  requests: StatusCounts,
  latency_ms: z.object({ p50: z.number(), p95: z.number() }).nullable(),
  bytes_out: z.number().int(),
  cpu_percent: z.number().nullable(),
  memory_bytes: z.number().int().nullable(),
  restarts: z.number().int(),
});
const SeriesJson = z.object({
  from: z.string().openapi({ format: "date-time" }),
  to: z.string().openapi({ format: "date-time" }),
  step_seconds: z.number().int(),
  memory_limit_bytes: z.number().int(),
  cpu_limit: z.number(),
  points: z.array(PointJson),
});

const metricsRoute = createRoute({
  method: "get",
  path: "/{id}/metrics",
  operationId: "appMetrics",
  tags: ["Metrics"],
  summary: "An app's requests, latency, traffic, CPU and memory over time",
  description: "One point per step, oldest first, zeros where nothing happened (docs/metrics.md, JSON route).",
  request: { params: AppIdParams, query: MetricsQuery },
  responses: {
    200: jsonReply(SeriesJson, "The series and the plan's limits.", NO_STORE),
    400: errorReply("A parameter is refused; `field` names it.", ["INVALID_REQUEST"]),
    404: errorReply("No app with this id in your account.", ["NOT_FOUND"]),
    ...SIGNED_IN_REPLIES,
  },
});

/** `GET /console/api/apps/{id}/metrics?from=&to=&step=` (src/console/actions/metrics.ts). */
export const metricsRoutes = consoleRouter().openapi(metricsRoute, async (c) => {
  const caller = callerOf(c);
  const read = await readMetrics(caller, await ownedApp(caller, c.req.valid("param").id), { from: c.req.query("from"), to: c.req.query("to"), step: c.req.query("step") });
  if (!read.ok) throw new ApiError(read.code, `${read.field}: ${read.message}`, { extra: { field: read.field } });
  return c.json(read.series, 200, { "Cache-Control": "no-store" });
});
