import type { HostnameProvider } from "./hostname-provider";
import type { ProviderOutcome } from "./states";

/**
 * The `cloudflare` hostname provider: Cloudflare for SaaS custom hostnames on the zone
 * CLOUDFLARE_ZONE_ID (API v4, bearer CLOUDFLARE_API_TOKEN). A domain entering `Verifying…` is
 * created with HTTP domain control validation (`ssl: {method: "http", type: "dv"}`: its DNS already
 * points to us, so Cloudflare validates over HTTP by itself); each step reads it back until its
 * `status` is `active` (the route: the domain becomes `Active`) and its `ssl.status` is `active`
 * (the certificate: HTTPS served). Removal deletes it. Every reply is Cloudflare's envelope
 * `{success, errors: [{code, message}], messages, result}`.
 */

export interface CloudflareHostname {
  id: string;
  hostname: string;
  status?: string;
  ssl?: { status?: string; validation_errors?: { message?: string }[] };
  verification_errors?: string[];
}

interface Envelope<T> {
  success?: boolean;
  errors?: { code?: number; message?: string }[];
  result?: T;
}

/** Hostname statuses after which Cloudflare will not route it without a change on our side. */
const HOSTNAME_FAILED = new Set(["blocked", "moved", "deleted", "pending_deletion", "test_failed", "test_blocked"]);

/** Reads a custom hostname's state as a provider outcome. */
export function cloudflareOutcome(result: CloudflareHostname): ProviderOutcome {
  const ssl = result.ssl?.status ?? "initializing";
  if (result.status && HOSTNAME_FAILED.has(result.status)) {
    const why = result.verification_errors?.[0]?.replace(/\.$/, "");
    return { kind: "failed", reason: `Cloudflare reports the hostname as ${result.status}${why ? `: ${why}` : ""}.` };
  }
  if (/timed_out$/.test(ssl) || ssl === "expired" || ssl === "deleted") {
    const why = result.ssl?.validation_errors?.[0]?.message?.replace(/\.$/, "");
    return { kind: "failed", reason: `Cloudflare could not issue the certificate (${ssl})${why ? `: ${why}` : ""}.` };
  }
  if (result.status !== "active") return { kind: "pending" };
  return { kind: "active", https: ssl === "active", waitingForCertificate: ssl !== "active" };
}

function apiFailure(status: number, body: Envelope<unknown> | null): string {
  const first = body?.errors?.[0];
  return first?.message ? `Cloudflare API error ${first.code ?? status}: ${first.message}` : `Cloudflare API answered HTTP ${status}`;
}

export function cloudflareProvider(options: { apiUrl: string; zoneId: string; token: string; fetch?: typeof fetch; timeoutMs?: number }): HostnameProvider {
  const doFetch = options.fetch ?? fetch;
  const base = `${options.apiUrl}/zones/${encodeURIComponent(options.zoneId)}/custom_hostnames`;

  async function call<T>(method: string, path: string, body?: unknown): Promise<{ ok: true; result: T; status: number } | { ok: false; reason: string; status: number }> {
    let res: Response;
    try {
      res = await doFetch(`${base}${path}`, {
        method,
        headers: { Authorization: `Bearer ${options.token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
    } catch {
      return { ok: false, status: 0, reason: "Cloudflare API could not be reached" };
    }
    const parsed = (await res.json().catch(() => null)) as Envelope<T> | null;
    if (!res.ok || !parsed?.success || parsed.result === undefined) return { ok: false, status: res.status, reason: apiFailure(res.status, parsed) };
    return { ok: true, status: res.status, result: parsed.result };
  }

  return {
    name: "cloudflare",
    async ensure(hostname, ref) {
      const create = () => call<CloudflareHostname>("POST", "", { hostname, ssl: { method: "http", type: "dv" } });
      let reply = ref ? await call<CloudflareHostname>("GET", `/${encodeURIComponent(ref)}`) : await create();
      // Deleted at Cloudflare meanwhile (by hand, or a removal that failed half way): made again.
      if (ref && !reply.ok && reply.status === 404) reply = await create();
      if (!reply.ok) return { ref, outcome: { kind: "failed", reason: reply.reason } };
      return { ref: reply.result.id, outcome: cloudflareOutcome(reply.result) };
    },
    async remove(_hostname, ref) {
      if (!ref) return;
      const reply = await call<{ id: string }>("DELETE", `/${encodeURIComponent(ref)}`);
      if (!reply.ok && reply.status !== 404) throw new Error(reply.reason);
    },
  };
}
