/**
 * `npm start`'s reconciler run: once the Worker answers, POST /admin/api/reconcile compares the
 * engine with the records (an earlier run killed mid-change may have left objects behind, or an
 * app dark) and the banner says what it did.
 */

interface RunCounts {
  removed_instances: number;
  freed_ports: number;
  removed_images: number;
  restored: number;
  failed: number;
  busy: number;
}

/** One line for the banner: what the reconciler removed and restored, or why it did not run. */
export async function reconcileAtStart(base: string, operatorToken: string | undefined): Promise<string> {
  if (!operatorToken) return "Reconciler: not run (no OPERATOR_TOKEN in .dev.vars).";
  try {
    const res = await fetch(`${base}/admin/api/reconcile`, { method: "POST", headers: { Authorization: `Bearer ${operatorToken}` }, signal: AbortSignal.timeout(600_000) });
    if (!res.ok) return `Reconciler: the Worker answered ${res.status}.`;
    const { run } = (await res.json()) as { run: { counts: RunCounts; error: string | null } | null };
    if (!run) return "Reconciler: no engine set.";
    if (run.error) return `Reconciler: could not read the engine (${run.error}).`;
    const c = run.counts;
    const removed = c.removed_instances + c.removed_images + c.freed_ports;
    const more = [c.failed > 0 ? `${c.failed} failed (see the log)` : "", c.busy > 0 ? `${c.busy} apps busy with a change` : ""].filter(Boolean).join(", ");
    return `Reconciler: ${removed} leftover objects removed, ${c.restored} apps brought back${more ? `; ${more}` : ""}.`;
  } catch (err) {
    return `Reconciler: not run (${err instanceof Error ? err.message : String(err)}).`;
  }
}
