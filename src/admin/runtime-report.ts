/**
 * `GET /admin/api/runtime` (operator token): the engine the Worker runs apps on, and what the
 * operator should fix there, one sentence each. On a swarm that includes each node's
 * no-new-privileges option, checked by a probe job (src/runtime/swarm-probe.ts), so the call may
 * take as long as an image pull on every node. With it, what survives a crash: the retire
 * ledger's length and the reconciler's last runs. `POST /admin/api/reconcile` runs the reconciler
 * now over the whole engine (npm start does, once the Worker is up).
 */
import { Hono } from "hono";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { runtimeFromEnv } from "../runtime";
import { DockerEngineError } from "../runtime/docker-client";
import { RuntimeUnavailableError } from "../runtime/types";
import { reconcileEngine } from "../apps/reconcile";
import { type ReconcileRun, lastReconcileRun } from "../apps/reconcile-runs";
import { retireLedgerLength } from "../apps/retire-ledger";
import { iso } from "../lib/time";
import { operatorAuth } from "./operator-auth";

export const NO_ENGINE = "No container engine is set (RUNTIME_URL is empty): apps cannot be deployed.";

/** A reconciler run as the report shows it. */
function viewRun(run: Omit<ReconcileRun, "id"> | undefined | null) {
  if (!run) return null;
  return { scope: run.scope, started_at: iso(run.startedAt), finished_at: iso(run.finishedAt), counts: run.counts, actions: run.actions, error: run.error };
}

/** The retire ledger's length and the reconciler's last run, and its last over the whole engine. */
async function recovery(env: Env) {
  const [length, last, lastEngine] = await Promise.all([retireLedgerLength(env), lastReconcileRun(env), lastReconcileRun(env, "engine")]);
  return { retire_ledger: { length }, reconciler: { last_run: viewRun(last), last_engine_run: viewRun(lastEngine) } };
}

export const runtimeReportRoutes = new Hono<AppEnv>()
  .get("/runtime", operatorAuth(), async (c) => {
    const runtime = runtimeFromEnv(c.env);
    if (!runtime) return c.json({ kind: null, api_version: null, problems: [NO_ENGINE], ...(await recovery(c.env)) });
    try {
      const { apiVersion } = await runtime.ping();
      const problems = await runtime.report();
      return c.json({ kind: c.get("config").RUNTIME_KIND, api_version: apiVersion, problems, ...(await recovery(c.env)) });
    } catch (error) {
      if (error instanceof RuntimeUnavailableError) throw new ApiError("ENGINE_UNAVAILABLE", error.message);
      // An engine that refuses what any engine of this kind answers (`/info`, `/nodes`) is not one
      // the Worker can use: the operator reads the engine's own words.
      if (error instanceof DockerEngineError) {
        throw new ApiError("ENGINE_UNAVAILABLE", `${error.message} Is RUNTIME_KIND (${c.get("config").RUNTIME_KIND}) right for this engine?`);
      }
      throw error;
    }
  })
  // The reconciler over the whole engine, now: its run as the report shows it (null: no engine set).
  .post("/reconcile", operatorAuth(), async (c) => c.json({ run: viewRun(await reconcileEngine(c.env, c.get("deps").now())) }));
