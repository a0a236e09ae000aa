import type { Forge } from "./signature";

/**
 * The branch and event rule of deploy on push: what a verified delivery does. Only a push event
 * (GitHub and Gitea/Forgejo `push`, GitLab `Push Hook`) to `refs/heads/<deploy branch>` that does
 * not delete the branch starts a deploy; everything else (pings, other events, tags, other
 * branches, deletions) is answered with nothing done. The payload fields read are common to the
 * three forges: `ref` and `after` (GitHub's `deleted` too).
 */

export type PushDecision = { action: "deploy"; commit: string | null } | { action: "ignore"; reason: string };

const PUSH_EVENT: Record<Forge, string> = { github: "push", gitea: "push", gitlab: "Push Hook" };
const ZERO_SHA = /^0+$/;
const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export function pushDecision(forge: Forge, event: string, payload: unknown, branch: string): PushDecision {
  if (event !== PUSH_EVENT[forge]) return { action: "ignore", reason: `A ${event === "" ? "delivery with no event name" : `"${event}" event`} does not deploy; only pushes do.` };
  const body = (typeof payload === "object" && payload !== null ? payload : {}) as Record<string, unknown>;
  const ref = typeof body.ref === "string" ? body.ref : null;
  if (ref !== `refs/heads/${branch}`) return { action: "ignore", reason: `A push to ${ref ?? "no ref"} does not deploy; the deploy branch is ${branch}.` };
  const after = typeof body.after === "string" ? body.after : null;
  if (body.deleted === true || (after !== null && ZERO_SHA.test(after))) return { action: "ignore", reason: `The push deleted the branch ${branch}; nothing to deploy.` };
  return { action: "deploy", commit: after !== null && SHA.test(after) ? after : null };
}

/** Billing rule 1 on a push: the first deploy (and its first charge) is pressed in the console, never pushed. */
export const PUSH_BEFORE_FIRST_DEPLOY = "Deploys on push start once the app's first Deploy has been pressed in the console; nothing was deployed.";

/**
 * Whether a push may deploy the app now: never before its first Deploy was pressed and charged,
 * so a push can never create a first charge. Null when it may.
 */
export function pushRefusal(app: { firstDeployAt: number | null; billingCharged: boolean }): { outcome: "refused"; code: "INVALID_STATE"; message: string } | null {
  if (app.firstDeployAt === null || !app.billingCharged) return { outcome: "refused", code: "INVALID_STATE", message: PUSH_BEFORE_FIRST_DEPLOY };
  return null;
}

/**
 * What identifies a push for replays, from what its signature covers (never from the delivery id,
 * a header outside it): the ref with the commits before and after, so the same push sent again
 * under any delivery id is known, while a later push (even one back to an earlier commit, which
 * has another `before`) is not. Null when the payload names no commit after it; the route then
 * uses the digest of the signed body.
 */
export function pushKey(payload: unknown): string | null {
  const body = (typeof payload === "object" && payload !== null ? payload : {}) as Record<string, unknown>;
  const commit = (value: unknown) => (typeof value === "string" && SHA.test(value) ? value : null);
  const after = commit(body.after);
  if (typeof body.ref !== "string" || after === null) return null;
  return `${body.ref} ${commit(body.before) ?? "-"} ${after}`;
}

/** How many pushes an app's controller remembers, so a replayed push does not deploy twice. */
export const REMEMBERED_PUSHES = 200;

/** The remembered push keys after `key` is seen: the newest REMEMBERED_PUSHES, oldest dropped. */
export function rememberPush(seen: readonly string[], key: string): string[] {
  return [...seen.filter((s) => s !== key), key].slice(-REMEMBERED_PUSHES);
}
