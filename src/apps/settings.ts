import { z } from "zod";
import { normalizeRepository, branchProblem, repositoryProblem } from "../source/forge";
import { sourceTokenProblem } from "../source/token";
import { DEFAULT_DOCKERFILE, normalizeRepoPath } from "../source/build-file";
import { subdomainProblem } from "./contract/subdomain";
import { HEALTH_BOUNDS, HEALTH_EXPECTS, healthPathProblem } from "./health";
import { DEFAULT_PLAN, PLAN_IDS } from "./plans";

/**
 * The settings of an app as the console sends them, checked with the contract's rules; each
 * refusal names its field (`subdomain: A subdomain is 3 to 63 characters long.`).
 */

const rule = (problem: (value: string) => string | null) => (value: string, ctx: z.RefinementCtx) => {
  const message = problem(value);
  if (message) ctx.addIssue({ code: "custom", message });
};

const path = (label: string, within: string, fallback: string) =>
  z
    .string()
    .max(255, `${label} is longer than 255 characters.`)
    .transform((value, ctx) => {
      const result = normalizeRepoPath(value, label, within);
      if (!result.ok) {
        ctx.addIssue({ code: "custom", message: result.message });
        return z.NEVER;
      }
      return result.path || fallback;
    });

const fields = {
  name: z.string({ message: "Give the app a name." }).trim().min(1, "Give the app a name.").max(64, "Use at most 64 characters for the app name."),
  repository: z
    .string({ message: "Give the repository's address." })
    .trim()
    .max(500, "The repository address is longer than 500 characters.")
    .superRefine(rule(repositoryProblem))
    .transform(normalizeRepository),
  branch: z.string().trim().max(255, "The branch name is longer than 255 characters.").superRefine(rule((b) => (b === "" ? null : branchProblem(b)))),
  root_directory: path("Root directory", "the repository", ""),
  dockerfile_path: path("Dockerfile path", "the root directory", DEFAULT_DOCKERFILE),
  /** Blank: a generated hostname derived from the app id. */
  subdomain: z.string().trim().max(63, "A subdomain is 3 to 63 characters long.").superRefine(rule((s) => (s === "" ? null : subdomainProblem(s)))),
  plan: z.enum(PLAN_IDS, { message: `Choose a plan: ${PLAN_IDS.join(", ")}.` }),
};

const wholeSeconds = (label: string, bounds: { min: number; max: number }) =>
  z
    .number({ message: `${label} is a whole number of seconds from ${bounds.min} to ${bounds.max}.` })
    .int(`${label} is a whole number of seconds from ${bounds.min} to ${bounds.max}.`)
    .min(bounds.min, `${label} is a whole number of seconds from ${bounds.min} to ${bounds.max}.`)
    .max(bounds.max, `${label} is a whole number of seconds from ${bounds.min} to ${bounds.max}.`);

/**
 * The health check (src/apps/health.ts): a path on the app only, the answer expected, a timeout
 * and a grace period at start, each within its bounds. An absent field keeps its current value.
 */
export const HealthCheckRequest = z
  .object({
    path: z.string({ message: "Give a path such as / or /healthz." }).superRefine(rule(healthPathProblem)),
    expect: z.enum(HEALTH_EXPECTS, { message: `Choose what a healthy answer is: ${HEALTH_EXPECTS.join(" or ")}.` }),
    timeout_seconds: wholeSeconds("The timeout", HEALTH_BOUNDS.timeoutSeconds),
    grace_seconds: wholeSeconds("The grace period", HEALTH_BOUNDS.graceSeconds),
  })
  .partial()
  .strict();

/** The console page's health check form: every field as typed, the numbers read from their text. */
export const HealthCheckForm = z
  .record(z.string(), z.string())
  .transform((form) => {
    const number = (text: string | undefined) => (text !== undefined && /^\s*\d{1,6}\s*$/.test(text) ? Number(text) : text);
    return { path: form.path?.trim(), expect: form.expect, timeout_seconds: number(form.timeout_seconds), grace_seconds: number(form.grace_seconds) };
  })
  .pipe(HealthCheckRequest.required());

export const NewAppRequest = z.object({
  name: fields.name,
  repository: fields.repository,
  branch: fields.branch.optional().transform((b) => b || "main"),
  root_directory: fields.root_directory.default(""),
  dockerfile_path: fields.dockerfile_path.default(DEFAULT_DOCKERFILE),
  subdomain: fields.subdomain.optional().transform((s) => s || null),
  plan: fields.plan.default(DEFAULT_PLAN),
});
export type NewAppRequest = z.output<typeof NewAppRequest>;

/** PATCH: an absent field stays as it is. */
export const AppSettingsRequest = z.object({
  name: fields.name.optional(),
  repository: fields.repository.optional(),
  branch: fields.branch.transform((b) => b || "main").optional(),
  root_directory: fields.root_directory.optional(),
  dockerfile_path: fields.dockerfile_path.optional(),
  subdomain: fields.subdomain.optional(),
  health_check: z.record(z.string(), z.unknown(), { message: "Give the health check as an object: {path, expect, timeout_seconds, grace_seconds}." }).pipe(HealthCheckRequest).optional(),
  /** A private repository's access token: write-only, sealed when saved; null removes it. */
  source_token: z.string({ message: "Give the access token as a string, or null to remove it." }).trim().superRefine(rule(sourceTokenProblem)).nullable().optional(),
});

const SETTING_FIELDS = Object.keys(AppSettingsRequest.shape);

/**
 * The JSON PATCH: the settings above, at least one of them, and no other field. An unknown field
 * is refused by name (400), so nothing the settings do not know reaches the records.
 */
export const AppSettingsPatch = z
  .record(z.string(), z.unknown())
  .superRefine((body, ctx) => {
    for (const key of Object.keys(body)) {
      if (!SETTING_FIELDS.includes(key)) ctx.addIssue({ code: "custom", path: [key], message: `Not a setting of an app; the settings are ${SETTING_FIELDS.join(", ")}.` });
    }
    if (Object.keys(body).length === 0) ctx.addIssue({ code: "custom", message: `Give at least one setting to change: ${SETTING_FIELDS.join(", ")}.` });
  })
  .pipe(AppSettingsRequest.strict());

export const PlanRequest = z.object({ plan: fields.plan });
