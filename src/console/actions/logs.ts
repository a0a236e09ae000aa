import type { AppRow } from "../../apps/store";
import { ApiError, invalid } from "../../http/errors";
import { describeIssues } from "../../http/validate";
import { appLogs } from "../../logs/app-logs";
import { parseLogId } from "../../logs/cursor";
import { deployLogEventStream } from "../../logs/deploy-stream";
import { liveLogs } from "../../logs/live-logs";
import { LogQuery, toSearch } from "../../logs/query";
import { relayStream, retryLaterStream } from "../../logs/sse";
import { LEASE_RENEW_MS, logStreamLeases } from "../../logs/stream-leases";
import { runtimeFor } from "../../runtime";
import type { LogLine } from "../../runtime/types";
import type { Caller } from "./caller";
import { ownedDeploy } from "./deploys";

/**
 * An app's output and a deploy's log, for the JSON routes (api/logs.ts) and the Logs tab
 * (pages/logs-section.tsx): search, the live stream and a running deploy's log as it grows.
 */

/** Lets a promise finish after the reply (what it does also happens later by itself if it is lost). */
export type KeepAlive = (promise: Promise<unknown>) => void;

/** Lines the Logs tab shows before the live stream takes over (and without JavaScript). */
export const PAGE_LOG_LINES = 100;

/** The query of a search (`since`, `until`, `q`, `limit`); a bad one is 400 INVALID_REQUEST naming it. */
export async function searchAppLogs(caller: Caller, app: AppRow, query: Record<string, string>): Promise<LogLine[]> {
  const parsed = LogQuery.safeParse(query);
  if (!parsed.success) throw invalid(describeIssues(parsed.error));
  return appLogs(caller.env, app.id).search(app.id, toSearch(parsed.data));
}

/** The search the Logs tab's form made, as typed (blank fields are left out). */
export interface PageSearch {
  q: string;
  since: string;
  until: string;
}

/** The Logs tab's lines: the last ones kept, or the ones its search asks for; a bad search says why instead. */
export async function pageLogLines(caller: Caller, appId: string, search: PageSearch): Promise<{ lines: LogLine[]; error: string | null }> {
  const parsed = LogQuery.safeParse(Object.fromEntries(Object.entries(search).filter(([, v]) => v !== "")));
  if (!parsed.success) return { lines: [], error: describeIssues(parsed.error) };
  const lines = await appLogs(caller.env, appId)
    // What is kept, without asking the engine: the page stays quick; its script follows live.
    .search(appId, { ...toSearch(parsed.data), limit: PAGE_LOG_LINES }, { collect: false })
    .catch(() => [] as LogLine[]);
  return { lines, error: null };
}

/**
 * The serving instance's output as SSE events. Every viewer of one instance shares one engine
 * `logs?follow=1`, held by the instance's LiveLogs object (src/logs/live-logs.ts), which gives
 * this viewer its stream; `resume` (a `Last-Event-ID`) starts after that line. The stream ends
 * when the instance stops or is replaced; the client's reconnect then follows the new one. An
 * account has at most LOG_STREAMS_PER_ACCOUNT streams open at once (stream-leases.ts): one more is 429.
 */
export async function openLogStream(caller: Caller, app: AppRow, resumeFrom: string | undefined, keepAlive: KeepAlive): Promise<ReadableStream<Uint8Array>> {
  const resume = parseLogId(resumeFrom);
  // Someone is watching: make sure the app's output is kept too.
  keepAlive(appLogs(caller.env, app.id).watch(app.id).catch(() => undefined));
  if (!app.instanceId || !runtimeFor(caller.env)?.logLines) return retryLaterStream();
  const lease = await takeStreamLease(caller, keepAlive);
  const object = liveLogs(caller.env, app.id, app.instanceId);
  const viewer = caller.deps.uuid();
  const live = await object.stream({ appId: app.id, instanceId: app.instanceId, viewer, resume }).catch((err: unknown) => {
    lease.release();
    throw err;
  });
  if (!live) {
    lease.release();
    return retryLaterStream();
  }
  return relayStream(live, () => {
    lease.release();
    keepAlive(object.leave({ viewer }).catch(() => undefined));
  });
}

interface StreamLease {
  release(): void;
}

/**
 * A slot among the account's LOG_STREAMS_PER_ACCOUNT live streams, renewed every LEASE_RENEW_MS
 * while the stream lasts (the timer lives with this request: if its isolate dies, the lease
 * lapses by itself), or 429 when every slot is held.
 */
async function takeStreamLease(caller: Caller, keepAlive: KeepAlive): Promise<StreamLease> {
  const leases = logStreamLeases(caller.env, caller.accountId);
  const leaseId = caller.deps.uuid();
  const limit = caller.config.LOG_STREAMS_PER_ACCOUNT;
  const taken = await leases.acquire({ leaseId, now: caller.deps.now(), limit });
  if (!taken.allowed) {
    const wait = taken.retryAfterSeconds;
    throw new ApiError("RATE_LIMIT_EXCEEDED", `This account already has ${limit} live log streams open, the most at once. Close one (another tab or window) or try again in ${wait} second${wait === 1 ? "" : "s"}.`, {
      headers: { "Retry-After": String(wait) },
    });
  }
  const renewal = setInterval(() => void leases.renew({ leaseId, now: caller.deps.now() }).catch(() => undefined), LEASE_RENEW_MS);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      clearInterval(renewal);
      // Given back while the request's context still lives (if this is lost, the lease lapses).
      keepAlive(leases.release({ leaseId }).catch(() => undefined));
    },
  };
}

/** A deploy's log as SSE events, line by line while it runs (404 when the app has no such deploy). */
export async function openDeployLogStream(caller: Caller, app: AppRow, deployId: string, resume: string | null): Promise<ReadableStream<Uint8Array>> {
  await ownedDeploy(caller, app, deployId);
  const running = async () => {
    const status = (await ownedDeploy(caller, app, deployId).catch(() => undefined))?.status;
    return status === "building" || status === "starting";
  };
  return deployLogEventStream({ bucket: caller.env.LOGS, appId: app.id, deployId, running, resume });
}
