/**
 * The disk watchdog: an instance may write at most its plan's disk allowance to its own filesystem
 * (its writable layer; src/apps/plans.ts `diskGb`). The storage driver cannot enforce that (overlay2
 * on ext4 has no quota), so on the Worker's cron each running instance's writable layer is measured
 * (the engine's `SizeRw`) and one past its allowance is restarted fresh: a new instance of the same
 * image through the one launch path, since the filesystem is ephemeral by contract (a restart in
 * place would keep what it wrote). Why is recorded on the app first (`last_restart`, shown on its
 * page and in its JSON), then the instance is removed and the app's controller brings a new one up
 * under its change mark (`reconcileOneApp`: a running app whose instance is gone gets a new one).
 * A run cut short is finished by the next cron's reconcile, which restores any instance gone.
 */
import { getConfig } from "../config";
import { describeError, log } from "../http/log";
import { runtimeFor } from "../runtime";
import { APP_ID_LABEL } from "./launch";
import { PLANS, type PlanId, planDiskBytes } from "./plans";
import { reconcileOneApp } from "./reconcile";
import { recordLastRestart } from "./app-columns";
import { servingApps } from "./store";

/** The allowance in words: `2 GiB`, or bytes to the MiB for a test's override (`10 MiB`). */
export function formatAllowance(bytes: number): string {
  const gib = bytes / 1024 ** 3;
  if (Number.isInteger(gib)) return `${gib} GiB`;
  const mib = bytes / 1024 ** 2;
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}

/**
 * The allowance of an app's instance (the override, when a test sets one) and the reason for a
 * restart when `written` is past it; null while within it.
 */
export function diskVerdict(plan: string, written: number, overrideBytes: number): string | null {
  const known = plan in PLANS;
  const allowance = overrideBytes > 0 ? overrideBytes : known ? planDiskBytes(plan as PlanId) : null;
  if (allowance === null || written <= allowance) return null;
  const whose = overrideBytes > 0 ? "its" : "its plan's";
  return `Restarted: the instance wrote more than ${whose} ${formatAllowance(allowance)} of disk.`;
}

/** Measures every running instance and restarts fresh those past their allowance; the number restarted. */
export async function watchInstanceDisks(env: Env, now: number): Promise<number> {
  const runtime = runtimeFor(env);
  if (!runtime) return 0;
  const override = getConfig(env).DISK_ALLOWANCE_OVERRIDE_BYTES;
  const [measured, running] = await Promise.all([runtime.writableBytes(APP_ID_LABEL), servingApps(env)]);
  const written = new Map(measured.map((m) => [m.id, m.bytes]));
  let restarted = 0;
  for (const app of running) {
    const bytes = written.get(app.instanceId);
    const reason = bytes === undefined ? null : diskVerdict(app.plan, bytes, override);
    if (!reason) continue;
    try {
      // Recorded first, and only while the app still runs this instance (a switch meanwhile replaced it).
      if (!(await recordLastRestart(env, app.id, app.instanceId, { at: now, reason }))) continue;
      log("info", "instance past its disk allowance", { app_id: app.id, written_bytes: bytes });
      await runtime.remove(app.instanceId, { graceSeconds: getConfig(env).STOP_GRACE_SECONDS });
      await reconcileOneApp(env, app.id, now);
      restarted++;
    } catch (err) {
      log("warn", "disk watchdog could not restart an instance", { app_id: app.id, ...describeError(err) });
    }
  }
  return restarted;
}
