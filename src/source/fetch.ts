/**
 * Fetches a branch's archive from its forge. Redirects are followed by hand, at most
 * MAX_REDIRECTS, and every hop passes the address rule (address.ts) that the repository's own
 * address passes. A failure is a sentence that names the repository as the app's settings hold
 * it; it never repeats what a redirect target answered (its status or its body), since that
 * target may be a service the forge pointed us at.
 */
import { type AddressRefusal, type SourcePolicy, addressRefusal } from "./address";
import { archiveUrl } from "./forge";
import { tokenHeader } from "./token";

export const MAX_REDIRECTS = 5;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** One reply as the redirect rule sees it. */
export interface Hop {
  status: number;
  location: string | null;
}

export type HopDecision =
  | { kind: "body" }
  | { kind: "follow"; url: string }
  | { kind: "refuse"; reason: "redirect_refused"; refusal: AddressRefusal }
  | { kind: "refuse"; reason: "too_many_redirects" | "missing" | "denied" | "unavailable" };

/**
 * The redirect rule: what to do with the reply to `url`, the `redirects`-th redirect target
 * (0 for the repository's own archive URL). A 2xx is the archive; a redirect is followed when its
 * target passes the address rule and fewer than MAX_REDIRECTS were followed; a 404 or 410 from
 * the repository's own URL means no such branch (or a private repository: forges answer 404 to
 * strangers), a 401 or 403 from it a refused token; anything else is unavailable.
 */
export function decideHop(url: string, reply: Hop, redirects: number, policy: SourcePolicy): HopDecision {
  if (reply.status >= 200 && reply.status < 300) return { kind: "body" };
  if (REDIRECTS.has(reply.status)) {
    if (!reply.location) return { kind: "refuse", reason: "unavailable" };
    if (redirects >= MAX_REDIRECTS) return { kind: "refuse", reason: "too_many_redirects" };
    let next: URL;
    try {
      next = new URL(reply.location, url);
    } catch {
      return { kind: "refuse", reason: "unavailable" };
    }
    const refusal = addressRefusal(next, policy);
    if (refusal) return { kind: "refuse", reason: "redirect_refused", refusal };
    next.hash = "";
    return { kind: "follow", url: next.href };
  }
  // Only the repository's own address speaks for the repository; a redirect target's status is not repeated.
  if (redirects === 0 && (reply.status === 404 || reply.status === 410)) return { kind: "refuse", reason: "missing" };
  if (redirects === 0 && (reply.status === 401 || reply.status === 403)) return { kind: "refuse", reason: "denied" };
  return { kind: "refuse", reason: "unavailable" };
}

/** What an address refusal says, as the end of a sentence. */
export function refusalClause(refusal: AddressRefusal): string {
  switch (refusal) {
    case "forbidden":
      return "a link-local or cloud metadata address, which deploys never fetch from";
    case "local":
      return "a loopback or private address, which deploys fetch from only when ALLOW_LOCAL_SOURCES is on";
    case "http":
      return "a plain http address, which deploys fetch from only when ALLOW_LOCAL_SOURCES is on (use https)";
    case "credentials":
      return "an address with a user name or password, which deploys do not use";
    case "not_http":
      return "an address that is not http or https";
  }
}

export type SourceFetch = { ok: true; body: ReadableStream<Uint8Array> } | { ok: false; message: string };

export interface SourceFetchOptions {
  policy: SourcePolicy;
  fetch?: typeof fetch;
  /** Aborts the requests and the body (SOURCE_TIMEOUT_SECONDS). */
  signal?: AbortSignal;
  /** A private repository's access token: the archive is read through the forge's API with it. */
  token?: string | null;
}

/** The archive of `branch` of `repository`, or the red-panel sentence saying why not. */
export async function fetchSourceArchive(repository: string, branch: string, options: SourceFetchOptions): Promise<SourceFetch> {
  const fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  const token = options.token ?? null;
  let url = archiveUrl(repository, branch, { withToken: token !== null });
  const origin = new URL(url).origin;
  const own = addressRefusal(url, options.policy);
  if (own) return { ok: false, message: `The repository ${repository} is at ${refusalClause(own)}.` };
  for (let redirects = 0; ; redirects++) {
    let res: Response;
    try {
      // The token goes to the forge's own origin only, never to a redirect target elsewhere.
      const header = tokenHeader(repository, origin, url, token);
      res = await fetcher(url, { redirect: "manual", signal: options.signal, headers: header ? [header] : [] });
    } catch (err) {
      if (options.signal?.aborted) throw err;
      return { ok: false, message: `The repository ${repository} could not be fetched: its forge could not be reached. Check the repository address.` };
    }
    const decision = decideHop(url, { status: res.status, location: res.headers.get("Location") }, redirects, options.policy);
    if (decision.kind === "body" && res.body) return { ok: true, body: res.body };
    await res.body?.cancel().catch(() => undefined);
    if (decision.kind === "follow") {
      url = decision.url;
      continue;
    }
    return { ok: false, message: hopMessage(repository, branch, decision, token !== null) };
  }
}

function hopMessage(repository: string, branch: string, decision: HopDecision, withToken: boolean): string {
  const cannot = `The repository ${repository} could not be fetched`;
  if (decision.kind !== "refuse") return `${cannot}: its forge answered with no archive.`;
  switch (decision.reason) {
    case "redirect_refused":
      return `${cannot}: its forge redirected to ${refusalClause(decision.refusal)}.`;
    case "too_many_redirects":
      return `${cannot}: its forge redirected more than ${MAX_REDIRECTS} times.`;
    case "missing":
      return withToken
        ? `The repository ${repository} has no branch ${branch}, or the saved access token cannot read it. Check the repository address, the deploy branch and the token's access to the repository.`
        : `The repository ${repository} has no branch ${branch}, or it is not public. Check the repository address and the deploy branch; for a private repository, save an access token in the app's settings.`;
    case "denied":
      return withToken
        ? `The forge of ${repository} refused the saved access token. Save a token that can read the repository (it may have expired or lack read access).`
        : `The repository ${repository} is private: its forge asks for an access token. Save one that can read the repository in the app's settings, then deploy again.`;
    case "unavailable":
      return `${cannot}: its forge did not serve the archive of branch ${branch}. Check the repository address and that the branch exists, then deploy again.`;
  }
}
