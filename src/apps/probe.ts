/**
 * SPEC.md, app deployment contract 2-3: after start, the port must answer HTTP within a bounded
 * time. Any HTTP reply counts as an answer (a 404 still proves the process listens on 0.0.0.0);
 * a refused or reset connection does not.
 */
export interface ProbeOptions {
  timeoutMs: number;
  /** Pause between tries. */
  intervalMs?: number;
  /** One try may take this long before it counts as no answer. */
  attemptTimeoutMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
}

export async function probeInstance(url: string, options: ProbeOptions): Promise<{ answered: true; status: number } | { answered: false; lastError: string }> {
  const { timeoutMs, intervalMs = 250, attemptTimeoutMs = 3000, fetch: doFetch = fetch, now = Date.now } = options;
  const deadline = now() + timeoutMs;
  let lastError = "no attempt";
  do {
    try {
      const res = await doFetch(`${url}/`, { redirect: "manual", signal: AbortSignal.timeout(attemptTimeoutMs) });
      await res.body?.cancel();
      return { answered: true, status: res.status };
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  } while (now() < deadline);
  return { answered: false, lastError };
}
