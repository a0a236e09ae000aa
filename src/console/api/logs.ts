import type { Context } from "hono";
import { getDeploy, getOwnedApp } from "../../apps/store";
import type { AppEnv } from "../../http/context";
import { ApiError, invalid, notFound } from "../../http/errors";
import { describeIssues } from "../../http/validate";
import { appLogs } from "../../logs/app-logs";
import { parseLogId } from "../../logs/cursor";
import { liveLogs } from "../../logs/live-logs";
import { LogQuery, toSearch } from "../../logs/query";
import { relayStream, retryLaterStream } from "../../logs/sse";
import { LEASE_RENEW_MS, logStreamLeases } from "../../logs/stream-leases";
import { deployLogEventStream } from "../../logs/deploy-stream";
import { runtimeFor } from "../../runtime";

/** `GET /console/api/apps/{id}/logs?since=&until=&q=&limit=` -> `{lines: [{at, stream, text}]}`, oldest first. */
export async function searchLogs(c: Context<AppEnv>) {
  const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id")!);
  const parsed = LogQuery.safeParse(c.req.query());
  if (!parsed.success) throw invalid(describeIssues(parsed.error));
  const lines = await appLogs(c.env, app.id).search(app.id, toSearch(parsed.data));
  return c.json({ lines }, 200, { "Cache-Control": "no-store" });
}

/**
 * `GET /console/api/apps/{id}/logs/stream`: the serving instance's output as SSE. Every viewer of
 * one instance shares one engine `logs?follow=1`, held by the instance's LiveLogs object
 * (src/logs/live-logs.ts), which gives this viewer its stream. `Last-Event-ID` (header, or
 * `last_event_id` for a page that reopens the stream itself) resumes after that line. The stream
 * ends when the instance stops or is replaced; the client's reconnect then follows the new one.
 * An account has at most LOG_STREAMS_PER_ACCOUNT streams open at once (stream-leases.ts): one
 * more is 429.
 */
export async function streamLogs(c: Context<AppEnv>) {
  const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id")!);
  const resume = parseLogId(c.req.header("Last-Event-ID") ?? c.req.query("last_event_id"));
  // Someone is watching: make sure the app's output is kept too.
  keepAlive(c, appLogs(c.env, app.id).watch(app.id).catch(() => undefined));
  let body: ReadableStream<Uint8Array> | null = null;
  if (app.instanceId && runtimeFor(c.env)?.logLines) {
    const lease = await takeStreamLease(c);
    const object = liveLogs(c.env, app.id, app.instanceId);
    const viewer = c.get("deps").uuid();
    const live = await object.stream({ appId: app.id, instanceId: app.instanceId, viewer, resume }).catch((err: unknown) => {
      lease.release();
      throw err;
    });
    const leave = () => {
      lease.release();
      keepAlive(c, object.leave({ viewer }).catch(() => undefined));
    };
    if (live) body = relayStream(live, leave);
    else lease.release();
  }
  return c.body(body ?? retryLaterStream(), 200, SSE_HEADERS);
}

/** Lets `promise` finish after the response (if it is lost, what it does also happens later by itself). */
function keepAlive(c: Context<AppEnv>, promise: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(promise);
  } catch {
    // No execution context (a direct call in tests): the promise runs on its own.
  }
}

// Proxies such as nginx would otherwise hold the events back (X-Accel-Buffering).
const SSE_HEADERS = { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", "X-Accel-Buffering": "no" };

interface StreamLease {
  release(): void;
}

/**
 * A slot among the account's LOG_STREAMS_PER_ACCOUNT live streams, renewed every LEASE_RENEW_MS
 * while the stream lasts (the timer lives with this request: if its isolate dies, the lease
 * lapses by itself), or 429 when every slot is held.
 */
async function takeStreamLease(c: Context<AppEnv>): Promise<StreamLease> {
  const leases = logStreamLeases(c.env, c.get("accountId")!);
  const leaseId = c.get("deps").uuid();
  const limit = c.get("config").LOG_STREAMS_PER_ACCOUNT;
  const taken = await leases.acquire({ leaseId, now: c.get("deps").now(), limit });
  if (!taken.allowed) {
    const wait = taken.retryAfterSeconds;
    throw new ApiError("RATE_LIMIT_EXCEEDED", `This account already has ${limit} live log streams open, the most at once. Close one (another tab or window) or try again in ${wait} second${wait === 1 ? "" : "s"}.`, {
      headers: { "Retry-After": String(wait) },
    });
  }
  const renewal = setInterval(() => void leases.renew({ leaseId, now: c.get("deps").now() }).catch(() => undefined), LEASE_RENEW_MS);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      clearInterval(renewal);
      // Given back while the request's context still lives (if this is lost, the lease lapses).
      keepAlive(c, leases.release({ leaseId }).catch(() => undefined));
    },
  };
}


/** `GET /console/api/apps/{id}/deploys/{deploy_id}/log/stream`: the deploy's log, line by line, while it runs. */
export async function streamDeployLog(c: Context<AppEnv>) {
  const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id")!);
  const deployId = c.req.param("deployId")!;
  if (!(await getDeploy(c.env, app.id, deployId))) throw notFound("No deploy with this id exists for this app.");
  const running = async () => {
    const status = (await getDeploy(c.env, app.id, deployId))?.status;
    return status === "building" || status === "starting";
  };
  const resume = c.req.header("Last-Event-ID") ?? c.req.query("last_event_id") ?? null;
  return c.body(deployLogEventStream({ bucket: c.env.LOGS, appId: app.id, deployId, running, resume }), 200, SSE_HEADERS);
}
