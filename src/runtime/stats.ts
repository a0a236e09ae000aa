/**
 * An instance's resource use as the engine reports it (`GET /containers/{id}/stats?stream=false`
 * on dockerd), read into the numbers the metrics keep. Pure.
 */

export interface InstanceStats {
  /** CPU used since the engine's previous reading, as a percentage of one CPU (200 = two full CPUs). */
  cpuPercentOfOneCpu: number | null;
  /** Memory in use, without the page cache the kernel can drop (what `docker stats` shows). */
  memoryBytes: number | null;
  /** Times the engine restarted the instance since it was created. */
  restartCount: number;
}

/** The subset of the engine's stats object read here (cgroup v1 and v2 spellings). */
export interface DockerStatsJson {
  cpu_stats?: { cpu_usage?: { total_usage?: number; percpu_usage?: readonly number[] | null }; system_cpu_usage?: number; online_cpus?: number };
  precpu_stats?: { cpu_usage?: { total_usage?: number }; system_cpu_usage?: number };
  memory_stats?: { usage?: number; stats?: Record<string, number> };
}

export function readDockerStats(json: DockerStatsJson, restartCount: number): InstanceStats {
  const cpu = json.cpu_stats;
  const pre = json.precpu_stats;
  let cpuPercent: number | null = null;
  const used = (cpu?.cpu_usage?.total_usage ?? 0) - (pre?.cpu_usage?.total_usage ?? 0);
  const system = (cpu?.system_cpu_usage ?? 0) - (pre?.system_cpu_usage ?? 0);
  const cpus = cpu?.online_cpus ?? cpu?.cpu_usage?.percpu_usage?.length ?? 0;
  if (pre?.system_cpu_usage && system > 0 && cpus > 0 && used >= 0) cpuPercent = (used / system) * cpus * 100;
  const mem = json.memory_stats;
  let memory: number | null = null;
  if (mem?.usage !== undefined) {
    // cgroup v2 names the page cache `inactive_file`, v1 `total_inactive_file` (or `cache`).
    const cache = mem.stats?.inactive_file ?? mem.stats?.total_inactive_file ?? mem.stats?.cache ?? 0;
    memory = Math.max(0, mem.usage - (cache < mem.usage ? cache : 0));
  }
  return { cpuPercentOfOneCpu: cpuPercent, memoryBytes: memory, restartCount };
}
