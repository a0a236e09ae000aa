/**
 * AppMetrics: one per app (named by the app id), its metrics in the object's own SQLite storage
 * (docs/metrics.md, "Storage"): a row per minute kept 7 days and a row per hour kept 30 days,
 * each written as counts arrive, so an hour's row needs no roll-up pass. While the app runs, the
 * object's alarm samples its instance's CPU and memory from the engine every 15 s. Erased with
 * the app.
 */
import { DurableObject } from "cloudflare:workers";
import { type AppRow, getApp } from "../apps/store";
import { type PlanId, planLimits } from "../apps/plans";
import { describeError, log } from "../http/log";
import { runtimeFor } from "../runtime";
import { instanceHealth } from "../runtime/instance-settings";
import { NO_WATCH, type WatchState, watchSample } from "../notifications/app-watch";
import type { Tally } from "./collector";
import { type Histogram, mergeInto } from "./latency-histogram";
import { type MetricsQuery, type StoredBucket, bucketStart } from "./series";

export const SAMPLE_MS = 15_000;
const KEEP_SECONDS: Record<number, number> = { 60: 7 * 86400, 3600: 30 * 86400 };

type Row = { step: number; at: number; r2: number; r3: number; r4: number; r5: number; latency: string; bytes: number; cpu_sum: number; cpu_n: number; mem_max: number | null; restarts: number };

export class AppMetrics extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS buckets (
      step INTEGER NOT NULL, at INTEGER NOT NULL,
      r2 INTEGER NOT NULL DEFAULT 0, r3 INTEGER NOT NULL DEFAULT 0, r4 INTEGER NOT NULL DEFAULT 0, r5 INTEGER NOT NULL DEFAULT 0,
      latency TEXT NOT NULL DEFAULT '{}', bytes INTEGER NOT NULL DEFAULT 0,
      cpu_sum REAL NOT NULL DEFAULT 0, cpu_n INTEGER NOT NULL DEFAULT 0, mem_max INTEGER, restarts INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (step, at))`);
  }

  /** Counts from one isolate's flush; starts the sampling if it is not running. */
  async add(appId: string, tallies: Tally[]): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      for (const t of tallies) {
        for (const step of [60, 3600]) {
          const row = this.#row(step, bucketStart(t.at, step));
          row.r2 += t.requests["2xx"];
          row.r3 += t.requests["3xx"];
          row.r4 += t.requests["4xx"];
          row.r5 += t.requests["5xx"];
          row.latency = JSON.stringify(mergeInto(JSON.parse(row.latency) as Histogram, t.latency));
          row.bytes += t.bytesOut;
          this.#put(row);
        }
      }
    });
    await this.#ensureSampling(appId);
  }

  /** The stored rows of `query.step` inside its range. */
  async rows(appId: string, query: MetricsQuery): Promise<StoredBucket[]> {
    await this.#ensureSampling(appId);
    const rows = this.ctx.storage.sql.exec<Row>("SELECT * FROM buckets WHERE step = ? AND at >= ? AND at < ? ORDER BY at", query.step, query.from, query.to).toArray();
    return rows.map((r) => ({
      at: r.at,
      requests: { "2xx": r.r2, "3xx": r.r3, "4xx": r.r4, "5xx": r.r5 },
      latency: JSON.parse(r.latency) as Histogram,
      bytesOut: r.bytes,
      cpuPercentSum: r.cpu_sum,
      cpuSamples: r.cpu_n,
      memoryBytesMax: r.mem_max,
      restarts: r.restarts,
    }));
  }

  /** Starts the sampling if it is not running (the health check asks this of every running app). */
  async watch(appId: string): Promise<void> {
    await this.#ensureSampling(appId);
  }

  /** The app is deleted: its metrics go with it. */
  async erase(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
  }

  override async alarm(): Promise<void> {
    const appId = this.ctx.storage.kv.get<string>("app_id");
    if (!appId) return;
    const next = await this.sample(appId, Date.now()).catch((err: unknown) => {
      log("warn", "metrics sample failed", { app_id: appId, ...describeError(err) });
      return true;
    });
    if (next) await this.ctx.storage.setAlarm(Date.now() + SAMPLE_MS);
  }

  /** One sample of the running instance at `nowMs`; false once the app no longer runs (sampling stops). */
  async sample(appId: string, nowMs: number): Promise<boolean> {
    const app = await getApp(this.env, appId);
    const runtime = runtimeFor(this.env);
    if (!app || app.status !== "running" || !app.instanceId || !runtime) return false;
    const stats = await runtime.stats(app.instanceId);
    if (!stats) return true;
    const cpus = planLimits(app.plan as PlanId).cpus;
    const last = this.ctx.storage.kv.get<{ instanceId: string; restartCount: number }>("last_restarts");
    const restarts = last?.instanceId === app.instanceId ? Math.max(0, stats.restartCount - last.restartCount) : 0;
    this.ctx.storage.kv.put("last_restarts", { instanceId: app.instanceId, restartCount: stats.restartCount });
    const seconds = Math.floor(nowMs / 1000);
    this.ctx.storage.transactionSync(() => {
      for (const step of [60, 3600]) {
        const row = this.#row(step, bucketStart(seconds, step));
        if (stats.cpuPercentOfOneCpu !== null) {
          row.cpu_sum += stats.cpuPercentOfOneCpu / cpus;
          row.cpu_n += 1;
        }
        if (stats.memoryBytes !== null) row.mem_max = Math.max(row.mem_max ?? 0, stats.memoryBytes);
        row.restarts += restarts;
        this.#put(row);
      }
      for (const [step, keep] of Object.entries(KEEP_SECONDS)) this.ctx.storage.sql.exec("DELETE FROM buckets WHERE step = ? AND at < ?", Number(step), seconds - keep);
    });
    await this.#alerts(app, nowMs, stats.memoryBytes, planLimits(app.plan as PlanId).memoryBytes, stats.restartCount);
    return true;
  }

  /** The sample's alerts (src/notifications/app-watch.ts): crashes, memory, errors; a failure is logged, the sample stands. */
  async #alerts(app: AppRow, nowMs: number, memoryBytes: number | null, memoryLimitBytes: number, restartCount: number): Promise<void> {
    try {
      const run = app.instanceId ? ((await runtimeFor(this.env)?.state?.(app.instanceId)) ?? null) : null;
      const state = run ? instanceHealth(run, nowMs) : "running";
      const since = bucketStart(Math.floor(nowMs / 1000), 60) - 4 * 60;
      const minutes = this.ctx.storage.sql.exec<{ at: number; total: number; errors: number }>("SELECT at, r2 + r3 + r4 + r5 AS total, r5 AS errors FROM buckets WHERE step = 60 AND at >= ?", since).toArray();
      const look = { now: nowMs, instanceId: app.instanceId!, state, restarts: run?.restarts ?? restartCount, exitCode: run?.exitCode ?? null, oomKilled: run?.oomKilled ?? false, memoryBytes, memoryLimitBytes, minutes };
      this.ctx.storage.kv.put("alert_watch", await watchSample(this.env, app, this.ctx.storage.kv.get<WatchState>("alert_watch") ?? NO_WATCH, look));
    } catch (err) {
      log("warn", "metrics alerts not evaluated", { app_id: app.id, ...describeError(err) });
    }
  }

  async #ensureSampling(appId: string): Promise<void> {
    this.ctx.storage.kv.put("app_id", appId);
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + 1000);
  }

  #row(step: number, at: number): Row {
    const found = this.ctx.storage.sql.exec<Row>("SELECT * FROM buckets WHERE step = ? AND at = ?", step, at).toArray()[0];
    return found ?? { step, at, r2: 0, r3: 0, r4: 0, r5: 0, latency: "{}", bytes: 0, cpu_sum: 0, cpu_n: 0, mem_max: null, restarts: 0 };
  }

  #put(r: Row): void {
    this.ctx.storage.sql.exec(
      "INSERT OR REPLACE INTO buckets (step, at, r2, r3, r4, r5, latency, bytes, cpu_sum, cpu_n, mem_max, restarts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      r.step, r.at, r.r2, r.r3, r.r4, r.r5, r.latency, r.bytes, r.cpu_sum, r.cpu_n, r.mem_max, r.restarts,
    );
  }
}

/** The metrics store of an app. */
export function appMetrics(env: Env, appId: string) {
  return env.APP_METRICS.get(env.APP_METRICS.idFromName(appId));
}
