import { getConfig } from "../config";
import { removeAppDomains } from "../domains/service";
import { describeError, log } from "../http/log";
import { appMetrics } from "../metrics/app-metrics";
import { appNetworkName } from "../runtime";
import type { ContainerRuntime } from "../runtime/types";
import { deleteAppLogs } from "./deploy-log";
import { APP_ID_LABEL, appImageRepository } from "./launch";
import { deleteRetireRowsOf, retireRowsOf } from "./retire-ledger";
import { type AppRow, deleteAppRecord, deployArtifacts } from "./store";
import { holdSubdomain } from "./subdomain-holds";
import { forgetIncidents } from "../notifications/store";

/**
 * Delete's work, run by the AppController with the app's change mark held: every instance and
 * image of the app (those its retire ledger still names included, and their rows), its logs, its
 * domains and its record.
 */
export async function teardownApp(env: Env, app: AppRow, runtime: ContainerRuntime | null): Promise<void> {
  const [artifacts, retiring] = await Promise.all([deployArtifacts(env, app.id), retireRowsOf(env, app.id)]);
  if (runtime) {
    // What the records name, and what the engine itself holds for the app: an old instance whose
    // removal after a switch never ran (its job or object was interrupted while it drained) is
    // named by no record.
    const [running, tagged] = await Promise.all([runtime.instances({ [APP_ID_LABEL]: app.id }), runtime.images(appImageRepository(app.id))]);
    for (const id of new Set([app.instanceId, ...artifacts.map((d) => d.instanceId), ...retiring.map((r) => r.instanceId), ...running])) if (id) await runtime.remove(id);
    for (const image of new Set([app.image, ...artifacts.map((d) => d.image), ...tagged])) if (image) await runtime.removeImage(image);
    // A network some unlabelled container still uses stays behind rather than block Delete.
    await runtime.removeNetwork(appNetworkName(app.id)).catch((err: unknown) => log("warn", "app network not removed", { app_id: app.id, ...describeError(err) }));
  }
  // Without an engine the rows stay, for the reconciler to find their instances once one answers.
  if (runtime) await deleteRetireRowsOf(env, app.id);
  await deleteAppLogs(env.LOGS, app.id);
  await appMetrics(env, app.id).erase();
  await forgetIncidents(env, app.id);
  await removeAppDomains(env, app.id);
  // Its subdomain stays the account's for SUBDOMAIN_HOLD_DAYS, held before the record lets it go.
  await holdSubdomain(env, { subdomain: app.subdomain, accountId: app.accountId, now: Date.now(), holdDays: getConfig(env).SUBDOMAIN_HOLD_DAYS });
  await deleteAppRecord(env, app.id);
}
