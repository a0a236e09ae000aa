/**
 * The run's shared Worker (globalSetup of vitest.e2e.config.ts). Most end-to-end files need a
 * Worker with the test settings and nothing of their own, and starting a `wrangler dev` took
 * 10-15 s each on a busy 2-core machine: they share one instead, with the machine's dockerd and a
 * DNS stand-in behind it (startWorker() and startAppsStack() with no settings, harness.ts and
 * apps-harness.ts). A file with settings of its own still starts its own.
 *
 * A small coordinator in the vitest process starts it when the first file asks (a run that needs
 * none starts none) and stops it after the run, removing what its apps left on the engine. Files
 * keep apart by their own accounts (unique emails) and delete their accounts' apps when they end.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureMigratedState } from "../../scripts/lib/dev-server";
import { startEngineWorker } from "./apps-harness";
import { SHARED_STACK, type SharedStackInfo } from "./harness";

type Stack = Awaited<ReturnType<typeof startEngineWorker>>;

async function startShared(): Promise<{ stack: Stack; info: SharedStackInfo; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "control-plane-e2e-shared-"));
  const outputFile = join(dir, "wrangler.log");
  const stack = await startEngineWorker({}, { outputFile });
  const { worker, engineUrl, dns } = stack;
  return { stack, dir, info: { url: worker.url, port: worker.port, persistTo: worker.persistTo, outputFile, engineUrl, dnsUrl: dns.url, resolverUrl: dns.resolverUrl } };
}

export default async function setup(): Promise<() => Promise<void>> {
  // Every Worker's state starts as a copy of this one: made here once, not by each of the first files.
  await ensureMigratedState();
  let shared: ReturnType<typeof startShared> | undefined;
  const coordinator = createServer((_req, res) => {
    shared ??= startShared();
    shared.then(
      ({ info }) => res.end(JSON.stringify(info)),
      (err: Error) => {
        res.statusCode = 500;
        res.end(err.message);
      },
    );
  });
  await new Promise<void>((ok) => coordinator.listen(0, "127.0.0.1", ok));
  process.env[SHARED_STACK] = `http://127.0.0.1:${(coordinator.address() as AddressInfo).port}`;
  return async () => {
    coordinator.close();
    const started = await shared?.catch(() => undefined);
    if (!started) return;
    // The Worker's stop() on its own Worker removes every app's instances, networks and images.
    await started.stack.worker.stop();
    await started.stack.close();
    rmSync(started.dir, { recursive: true, force: true });
  };
}
