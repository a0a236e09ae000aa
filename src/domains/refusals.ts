import { PLANS, type PlanId } from "../apps/plans";
import type { AppStatus } from "../db/schema";

/**
 * docs/domains.md, rule 1: up to
 * 3 per app; available on the Starter plan and above; the app deployed and running. Each refusal
 * has its own code and sentence (issue 15). Pure: the caller reads the app and the count.
 */

/** docs/domains.md, rule 1: up to 3 custom domains per app. */
export const MAX_DOMAINS_PER_APP = 3;

export const ADD_REFUSALS = {
  APP_NOT_RUNNING: "The app must be deployed and running before a custom domain can be added.",
  PLAN_REQUIRED: "Custom domains are available on the Starter plan and above.",
  DOMAIN_LIMIT: `An app can have up to ${MAX_DOMAINS_PER_APP} custom domains.`,
  /** Says nothing of which account or app has it. */
  DOMAIN_TAKEN: "This hostname is already in use as a custom domain. Choose another, or remove it where it is used first.",
} as const;

export type AddRefusalCode = keyof typeof ADD_REFUSALS;
export type AddRefusal = { code: AddRefusalCode; message: string };

export function planAllowsCustomDomains(plan: string): boolean {
  return plan in PLANS && PLANS[plan as PlanId].customDomains;
}

/**
 * Whether a domain may be added to an app in this state, checked in the spec's order: running,
 * plan, count, then the hostname being free. null: it may.
 */
export function addRefusal(input: { appStatus: AppStatus; plan: string; domainCount: number; hostnameTaken: boolean }): AddRefusal | null {
  const refuse = (code: AddRefusalCode): AddRefusal => ({ code, message: ADD_REFUSALS[code] });
  if (input.appStatus !== "running") return refuse("APP_NOT_RUNNING");
  if (!planAllowsCustomDomains(input.plan)) return refuse("PLAN_REQUIRED");
  if (input.domainCount >= MAX_DOMAINS_PER_APP) return refuse("DOMAIN_LIMIT");
  if (input.hostnameTaken) return refuse("DOMAIN_TAKEN");
  return null;
}

/**
 * Issue 15, plan changes: moving an app with custom domains to a plan without them is refused,
 * naming the domains to remove first. null: the change may go ahead.
 */
export function planChangeRefusal(plan: string, hostnames: readonly string[]): { code: "PLAN_REQUIRED"; message: string } | null {
  if (planAllowsCustomDomains(plan) || hostnames.length === 0) return null;
  const label = plan in PLANS ? PLANS[plan as PlanId].label : plan;
  const list = hostnames.length === 1 ? hostnames[0]! : `${hostnames.slice(0, -1).join(", ")} and ${hostnames[hostnames.length - 1]}`;
  const noun = hostnames.length === 1 ? "this custom domain" : "these custom domains";
  return {
    code: "PLAN_REQUIRED",
    message: `The ${label} plan has no custom domains. Remove ${noun} first: ${list}.`,
  };
}
