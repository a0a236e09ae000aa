import { env } from "cloudflare:workers";
import { createApp } from "./app";
import { sweepAudit } from "./auth/audit-store";
import { sweepPasskeyChallenges } from "./auth/passkeys";
import { DEPLOY_DLQ, DEPLOY_QUEUE, handleDeployBatch } from "./apps/deploy-job";
import { watchInstanceDisks } from "./apps/disk-watch";
import { reconcileEngine } from "./apps/reconcile";
import { getConfig } from "./config";
import { handleExportBatch } from "./exports/job";
import { wakeOverdueDomains } from "./domains/service";
import { runSweep } from "./exports/sweep";
import { defaultDeps } from "./http/context";
import { handleNotificationBatch, sweepDeliveries } from "./notifications/deliver";
import { NOTIFICATIONS_QUEUE } from "./notifications/raise";
import { watchWallets } from "./notifications/wallet-watch";

export { AppController } from "./apps/app-controller";
export { ManagedDatabase } from "./databases/managed-database";
export { DomainChecker } from "./domains/checker";
export { ExportGate } from "./exports/export-gate";
export { AppLogs } from "./logs/app-logs";
export { LogStreamLeases } from "./logs/stream-leases";
export { LiveLogs } from "./logs/live-logs";
export { AppMetrics } from "./metrics/app-metrics";
export { RateLimiter } from "./http/rate-limiter";

// Validate the settings as the Worker loads: a bad value stops it here with a message naming
// the variable, instead of failing on some later request.
getConfig(env);

const app = createApp();

export default {
  fetch: app.fetch,
  queue: (batch, env) =>
    batch.queue === DEPLOY_QUEUE || batch.queue === DEPLOY_DLQ
      ? handleDeployBatch(batch, env, { now: defaultDeps.now })
      : batch.queue === NOTIFICATIONS_QUEUE
        ? handleNotificationBatch(batch, env, { now: defaultDeps.now })
        : handleExportBatch(batch, env, { now: defaultDeps.now }),
  scheduled: async (_controller, env) => {
    await runSweep(env, defaultDeps.now(), getConfig(env).ARCHIVE_RETENTION_SECONDS);
    await wakeOverdueDomains(env, defaultDeps.now());
    // Audit rows past their 400 days, passkey challenges nobody answered.
    await sweepAudit(env, defaultDeps.now());
    await sweepPasskeyChallenges(env, defaultDeps.now());
    // The engine against the records: orphans removed, apps that should run brought back (src/apps/reconcile.ts).
    await reconcileEngine(env, defaultDeps.now());
    // Instances past their plan's disk allowance restarted fresh (src/apps/disk-watch.ts).
    await watchInstanceDisks(env, defaultDeps.now());
    // Alert deliveries whose queue message was lost (src/notifications/deliver.ts).
    await sweepDeliveries(env, defaultDeps.now());
    // wallet.low: balances below the renewals due within 7 days (src/notifications/wallet-watch.ts).
    await watchWallets(env, defaultDeps.now());
  },
} satisfies ExportedHandler<Env>;
