/**
 * The plans an app can be on, in one place: the limits its instance gets (memory, CPUs, processes,
 * and `diskGb`, the disk its instance may write, which src/apps/disk-watch.ts enforces), its monthly price in
 * whole DA (integers only), and whether it may have custom domains (docs/domains.md, rule 1: Starter and
 * above). docs/apps.md, contract 8: the entry plan Lite costs 1,200 DA per app per month.
 */
export const PLANS = {
  lite: { label: "Lite", memoryMb: 256, cpus: 0.25, pids: 128, diskGb: 2, priceDa: 1200, customDomains: false },
  starter: { label: "Starter", memoryMb: 512, cpus: 0.5, pids: 256, diskGb: 5, priceDa: 2500, customDomains: true },
  pro: { label: "Pro", memoryMb: 1024, cpus: 1, pids: 512, diskGb: 10, priceDa: 6000, customDomains: true },
} as const;

export type PlanId = keyof typeof PLANS;
export const PLAN_IDS = Object.keys(PLANS) as [PlanId, ...PlanId[]];
export const DEFAULT_PLAN: PlanId = "lite";

/** The instance limits of a plan, as the container engine takes them (`pids`: processes and threads). */
export function planLimits(plan: PlanId): { memoryBytes: number; cpus: number; pids: number } {
  const { memoryMb, cpus, pids } = PLANS[plan];
  return { memoryBytes: memoryMb * 1024 * 1024, cpus, pids };
}

/** What an instance on the plan may write to its own filesystem (its writable layer), in bytes (GiB). */
export function planDiskBytes(plan: PlanId): number {
  return PLANS[plan].diskGb * 1024 ** 3;
}
