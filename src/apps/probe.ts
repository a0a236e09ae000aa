import { DEFAULT_HEALTH_CHECK, type HealthCheckSettings, type ProbeResult, expectMatches, failureMessage, healthUrl } from "./health";

/**
 * docs/apps.md, contract 2-3: after start, the port must answer HTTP within a bounded
 * time. By default any HTTP reply on `/` counts as an answer (a 404 still proves the process
 * listens on 0.0.0.0); a refused or reset connection does not. An app's health check settings
 * (src/apps/health.ts) change the path, the answer expected and how long one try may take.
 */
export interface ProbeOptions {
  timeoutMs: number;
  /** Pause between tries. */
  intervalMs?: number;
  /** One try may take this long before it counts as no answer; default the check's timeout. */
  attemptTimeoutMs?: number;
  /** The app's health check; default any answer on `/`. */
  check?: HealthCheckSettings;
  fetch?: typeof fetch;
  now?: () => number;
}

/** One probe of an instance: its status, or that it gave none in time (a redirect is not followed). */
export async function probeOnce(url: string, check: HealthCheckSettings, options: { attemptTimeoutMs?: number; fetch?: typeof fetch } = {}): Promise<ProbeResult> {
  const target = healthUrl(url, check.path);
  if (!target) return { kind: "error" };
  const doFetch = options.fetch ?? fetch;
  try {
    const res = await doFetch(target, { redirect: "manual", signal: AbortSignal.timeout(options.attemptTimeoutMs ?? check.timeoutSeconds * 1000) });
    await res.body?.cancel();
    return { kind: "status", status: res.status };
  } catch (err) {
    const name = err instanceof Error ? err.name : "";
    return name === "TimeoutError" || name === "AbortError" ? { kind: "timeout" } : { kind: "error" };
  }
}

/** Tries until the instance gives the expected answer or `timeoutMs` has passed. */
export async function probeInstance(url: string, options: ProbeOptions): Promise<{ answered: true; status: number } | { answered: false; lastError: string }> {
  const { timeoutMs, intervalMs = 250, check = DEFAULT_HEALTH_CHECK, fetch: doFetch = fetch, now = Date.now } = options;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? Math.min(check.timeoutSeconds * 1000, timeoutMs);
  const deadline = now() + timeoutMs;
  let lastError = "no attempt";
  do {
    const result = await probeOnce(url, check, { attemptTimeoutMs, fetch: doFetch });
    if (result.kind === "status" && expectMatches(check.expect, result.status)) return { answered: true, status: result.status };
    lastError = failureMessage(check, result) ?? lastError;
    await new Promise((r) => setTimeout(r, intervalMs));
  } while (now() < deadline);
  return { answered: false, lastError };
}
