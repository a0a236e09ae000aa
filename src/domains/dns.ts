import type { DnsRecord, RecordType } from "./pointing";

/**
 * DNS over HTTPS, JSON flavour (`accept: application/dns-json`, as Cloudflare's and Google's
 * resolvers answer it): `GET <DNS_RESOLVER_URL>?name=<hostname>&type=A`. A resolver follows CNAME
 * chains itself and puts the chain in the answer, so asking for A and AAAA gives every record the
 * pointing rule reads. Any failure (timeout, unreachable, an HTTP error, SERVFAIL, REFUSED, a body
 * that is not DNS JSON) becomes a "DNS lookup failed: ..." sentence, never a throw.
 */

/** RFC 1035 / IANA type numbers of the records the pointing rule reads. */
const TYPE_NUMBERS: Record<number, RecordType> = { 1: "A", 5: "CNAME", 28: "AAAA" };

/** RFC 1035 / 6895 RCODEs a resolver may answer with. */
const RCODES: Record<number, string> = { 1: "FORMERR", 2: "SERVFAIL", 4: "NOTIMP", 5: "REFUSED" };
const NOERROR = 0;
const NXDOMAIN = 3;

interface DohAnswer {
  Status?: number;
  Answer?: { name?: string; type?: number; data?: string }[];
}

export interface Resolver {
  url: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

export type Lookup = { ok: true; records: DnsRecord[] } | { ok: false; reason: string };

const norm = (name: string) => name.trim().toLowerCase().replace(/\.$/, "");

type Answered = { ok: true; answers: NonNullable<DohAnswer["Answer"]> } | { ok: false; reason: string };

async function query(resolver: Resolver, hostname: string, type: "A" | "AAAA"): Promise<Lookup> {
  const answered = await ask(resolver, hostname, type);
  if (!answered.ok) return answered;
  const records: DnsRecord[] = [];
  for (const answer of answered.answers) {
    const kind = TYPE_NUMBERS[answer.type ?? -1];
    if (kind && typeof answer.name === "string" && typeof answer.data === "string") {
      records.push({ name: norm(answer.name), type: kind, data: kind === "CNAME" ? norm(answer.data) : answer.data.trim().toLowerCase() });
    }
  }
  return { ok: true, records };
}

/** RFC 1035 TXT type number. */
const TXT = 16;

/**
 * A TXT record's text as DoH JSON gives it: one or more quoted character-strings, joined
 * (RFC 7208 3.3 reads a split value the same way); unquoted text as it is.
 */
export function txtText(data: string): string {
  const parts = [...data.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, "$1"));
  return parts.length > 0 ? parts.join("") : data.trim();
}

/** The TXT values at `name` (none when the name does not exist), or why the lookup failed. */
export async function lookupTxt(resolver: Resolver, name: string): Promise<{ ok: true; values: string[] } | { ok: false; reason: string }> {
  const answered = await ask(resolver, name, "TXT");
  if (!answered.ok) return answered;
  const wanted = norm(name);
  const values = answered.answers
    .filter((answer) => answer.type === TXT && typeof answer.data === "string" && typeof answer.name === "string" && norm(answer.name) === wanted)
    .map((answer) => txtText(answer.data!));
  return { ok: true, values };
}

async function ask(resolver: Resolver, hostname: string, type: "A" | "AAAA" | "TXT"): Promise<Answered> {
  const doFetch = resolver.fetch ?? fetch;
  const url = `${resolver.url}?name=${encodeURIComponent(hostname)}&type=${type}`;
  let res: Response;
  try {
    res = await doFetch(url, { headers: { accept: "application/dns-json" }, signal: AbortSignal.timeout(resolver.timeoutMs) });
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    return {
      ok: false,
      reason: timedOut
        ? `DNS lookup failed: no answer from the resolver within ${Math.round(resolver.timeoutMs / 1000)} seconds`
        : "DNS lookup failed: the resolver could not be reached",
    };
  }
  if (!res.ok) {
    await res.body?.cancel();
    return { ok: false, reason: `DNS lookup failed: the resolver answered HTTP ${res.status}` };
  }
  let body: DohAnswer;
  try {
    body = (await res.json()) as DohAnswer;
  } catch {
    return { ok: false, reason: "DNS lookup failed: the resolver's answer was not DNS JSON" };
  }
  if (typeof body !== "object" || body === null || typeof body.Status !== "number") {
    return { ok: false, reason: "DNS lookup failed: the resolver's answer was not DNS JSON" };
  }
  if (body.Status !== NOERROR && body.Status !== NXDOMAIN) {
    return { ok: false, reason: `DNS lookup failed: the resolver answered ${RCODES[body.Status] ?? `RCODE ${body.Status}`} for ${hostname}` };
  }
  return { ok: true, answers: Array.isArray(body.Answer) ? body.Answer : [] };
}

/** The CNAME, A and AAAA records reached from `hostname`, or why the lookup failed. */
export async function lookupRecords(resolver: Resolver, hostname: string): Promise<Lookup> {
  const [a, aaaa] = await Promise.all([query(resolver, hostname, "A"), query(resolver, hostname, "AAAA")]);
  if (!a.ok) return a;
  if (!aaaa.ok) return aaaa;
  const seen = new Set<string>();
  const records: DnsRecord[] = [];
  for (const record of [...a.records, ...aaaa.records]) {
    const key = `${record.name} ${record.type} ${record.data}`;
    if (!seen.has(key)) {
      seen.add(key);
      records.push(record);
    }
  }
  return { ok: true, records };
}
