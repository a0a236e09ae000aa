/**
 * `GET /admin/api/runtime` (operator token): the engine the Worker runs apps on, and what the
 * operator should fix there, one sentence each. On a swarm that includes each node's
 * no-new-privileges option, checked by a probe job (src/runtime/swarm-probe.ts), so the call may
 * take as long as an image pull on every node.
 */
import { Hono } from "hono";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { runtimeFromEnv } from "../runtime";
import { DockerEngineError } from "../runtime/docker-client";
import { RuntimeUnavailableError } from "../runtime/types";
import { operatorAuth } from "./operator-auth";

export const NO_ENGINE = "No container engine is set (RUNTIME_URL is empty): apps cannot be deployed.";

export const runtimeReportRoutes = new Hono<AppEnv>().get("/runtime", operatorAuth(), async (c) => {
  const runtime = runtimeFromEnv(c.env);
  if (!runtime) return c.json({ kind: null, api_version: null, problems: [NO_ENGINE] });
  try {
    const { apiVersion } = await runtime.ping();
    const problems = runtime.report ? await runtime.report() : [];
    return c.json({ kind: c.get("config").RUNTIME_KIND, api_version: apiVersion, problems });
  } catch (error) {
    if (error instanceof RuntimeUnavailableError) throw new ApiError("ENGINE_UNAVAILABLE", error.message);
    // An engine that refuses what any engine of this kind answers (`/info`, `/nodes`) is not one
    // the Worker can use: the operator reads the engine's own words.
    if (error instanceof DockerEngineError) {
      throw new ApiError("ENGINE_UNAVAILABLE", `${error.message} Is RUNTIME_KIND (${c.get("config").RUNTIME_KIND}) right for this engine?`);
    }
    throw error;
  }
});
