/**
 * Which requests change state, and what the audit log calls each change: one table from a route
 * (method and path pattern) to an action and the kind of resource it acts on, shared by the
 * console's JSON routes, its form routes, the public API's export start, push webhooks and the
 * operator's credits. The audit middleware (trail.ts) looks each request up here; requests that
 * match nothing (every GET, polls, downloads) are not recorded. Pure: no I/O.
 */

export type ResourceKind = "account" | "session" | "passkey" | "totp" | "token" | "database" | "app" | "domain" | "wallet" | "channel";

export interface AuditRoute {
  action: string;
  resource: ResourceKind;
  /** The path parameter naming the resource (`id`, `hostname`…); none: the reply or the account says. */
  param?: string;
  /** How the acting party is known; `session` unless said. */
  via?: "session" | "token" | "webhook" | "operator";
}

type Entry = [method: string, pattern: string, route: AuditRoute];

/** An app route of the JSON API and the same change as a page form (forms always post). */
const app = (action: string, path: string, method = "POST"): Entry[] => [
  [method, `/console/api/apps/:id${path}`, { action, resource: "app", param: "id" }],
  ["POST", `/console/apps/:id${path}`, { action, resource: "app", param: "id" }],
];

export const AUDITED_ROUTES: readonly Entry[] = [
  // Sign-up, sign-in and sign-out (JSON and forms).
  ["POST", "/console/api/signup", { action: "account.signup", resource: "account" }],
  ["POST", "/console/signup", { action: "account.signup", resource: "account" }],
  ["POST", "/console/api/login", { action: "signin.password", resource: "account" }],
  ["POST", "/console/signin", { action: "signin.password", resource: "account" }],
  ["POST", "/console/api/passkeys/signin", { action: "signin.passkey", resource: "account" }],
  ["POST", "/console/api/logout", { action: "signout", resource: "session" }],
  ["POST", "/console/signout", { action: "signout", resource: "session" }],
  // The account's own security: passkeys, two-step sign-in, sessions, password.
  ["POST", "/console/api/passkeys/register", { action: "passkey.add", resource: "passkey" }],
  ["DELETE", "/console/api/passkeys/:id", { action: "passkey.remove", resource: "passkey", param: "id" }],
  ["POST", "/console/profile/passkeys/:id/remove", { action: "passkey.remove", resource: "passkey", param: "id" }],
  ["POST", "/console/api/totp/setup", { action: "totp.setup", resource: "totp" }],
  ["POST", "/console/api/totp/enable", { action: "totp.enable", resource: "totp" }],
  ["POST", "/console/api/totp/disable", { action: "totp.disable", resource: "totp" }],
  ["POST", "/console/profile/totp/setup", { action: "totp.setup", resource: "totp" }],
  ["POST", "/console/profile/totp/enable", { action: "totp.enable", resource: "totp" }],
  ["POST", "/console/profile/totp/disable", { action: "totp.disable", resource: "totp" }],
  ["DELETE", "/console/api/sessions/:id", { action: "session.end", resource: "session", param: "id" }],
  ["POST", "/console/profile/sessions/:id/end", { action: "session.end", resource: "session", param: "id" }],
  ["POST", "/console/api/sessions/revoke-others", { action: "session.end_others", resource: "session" }],
  ["POST", "/console/profile/sessions/revoke-others", { action: "session.end_others", resource: "session" }],
  ["POST", "/console/api/password", { action: "password.change", resource: "account" }],
  ["POST", "/console/profile/password", { action: "password.change", resource: "account" }],
  // API tokens.
  ["POST", "/console/api/tokens", { action: "token.create", resource: "token" }],
  ["POST", "/console/profile/tokens", { action: "token.create", resource: "token" }],
  ["DELETE", "/console/api/tokens/:id", { action: "token.revoke", resource: "token", param: "id" }],
  ["POST", "/console/profile/tokens/:id/revoke", { action: "token.revoke", resource: "token", param: "id" }],
  // Databases.
  ["POST", "/console/api/databases", { action: "database.create", resource: "database" }],
  ["POST", "/console/databases", { action: "database.create", resource: "database" }],
  ["DELETE", "/console/api/databases/:id", { action: "database.delete", resource: "database", param: "id" }],
  ["POST", "/console/databases/:id/delete", { action: "database.delete", resource: "database", param: "id" }],
  ["POST", "/console/api/databases/:id/sql", { action: "database.sql", resource: "database", param: "id" }],
  ["POST", "/console/databases/:id/sql", { action: "database.sql", resource: "database", param: "id" }],
  ["POST", "/console/databases/:id/exports", { action: "database.export", resource: "database", param: "id" }],
  ["POST", "/api/v1/dbs/:id/export", { action: "database.export", resource: "database", param: "id", via: "token" }],
  // Apps: create, settings, each control, deploys by kind, rollback, delete.
  ["POST", "/console/api/apps", { action: "app.create", resource: "app" }],
  ["POST", "/console/apps", { action: "app.create", resource: "app" }],
  ["PATCH", "/console/api/apps/:id", { action: "app.settings", resource: "app", param: "id" }],
  ["POST", "/console/apps/:id/settings", { action: "app.settings", resource: "app", param: "id" }],
  ["POST", "/console/apps/:id/health-check", { action: "app.settings", resource: "app", param: "id" }],
  ["DELETE", "/console/api/apps/:id", { action: "app.delete", resource: "app", param: "id" }],
  ["POST", "/console/apps/:id/delete", { action: "app.delete", resource: "app", param: "id" }],
  ...app("app.deploy.manual", "/deploy"),
  ...app("app.stop", "/stop"),
  ...app("app.start", "/start"),
  ...app("app.restart", "/restart"),
  ...app("app.plan", "/plan"),
  ...app("app.rollback", "/deploys/:deployId/rollback"),
  ["POST", "/webhooks/apps/:id", { action: "app.deploy.push", resource: "app", param: "id", via: "webhook" }],
  // An app's environment, webhook secret and source token.
  ...app("env.save", "/env", "PUT"),
  ...app("env.save", "/env/paste"),
  ...app("webhook.rotate", "/webhook/rotate"),
  ["POST", "/console/apps/:id/source-token", { action: "source_token.set", resource: "app", param: "id" }],
  ["POST", "/console/apps/:id/source-token/remove", { action: "source_token.remove", resource: "app", param: "id" }],
  // Custom domains (the resource is the hostname).
  ["POST", "/console/api/apps/:id/domains", { action: "domain.add", resource: "domain" }],
  ["POST", "/console/apps/:id/domains", { action: "domain.add", resource: "domain" }],
  ["POST", "/console/api/apps/:id/domains/:hostname/verify", { action: "domain.verify", resource: "domain", param: "hostname" }],
  ["POST", "/console/apps/:id/domains/:hostname/verify", { action: "domain.verify", resource: "domain", param: "hostname" }],
  ["DELETE", "/console/api/apps/:id/domains/:hostname", { action: "domain.remove", resource: "domain", param: "hostname" }],
  ["POST", "/console/apps/:id/domains/:hostname/remove", { action: "domain.remove", resource: "domain", param: "hostname" }],
  // Notification channels (alerts): add, delete, send a test.
  ["POST", "/console/api/notifications/channels", { action: "channel.create", resource: "channel" }],
  ["POST", "/console/notifications/channels", { action: "channel.create", resource: "channel" }],
  ["DELETE", "/console/api/notifications/channels/:id", { action: "channel.delete", resource: "channel", param: "id" }],
  ["POST", "/console/notifications/channels/:id/delete", { action: "channel.delete", resource: "channel", param: "id" }],
  ["POST", "/console/api/notifications/channels/:id/test", { action: "channel.test", resource: "channel", param: "id" }],
  ["POST", "/console/notifications/channels/:id/test", { action: "channel.test", resource: "channel", param: "id" }],
  // Credits an operator adds to an account's wallet.
  ["POST", "/admin/api/accounts/:account/credits", { action: "credits.add", resource: "wallet", param: "account", via: "operator" }],
];

/** Every action the log may hold, for the Security log's filter. */
export const AUDIT_ACTIONS: readonly string[] = [...new Set(AUDITED_ROUTES.map(([, , r]) => r.action))].sort();

export interface AuditMatch {
  route: AuditRoute;
  params: Record<string, string>;
}

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The audited route a request is, with its path parameters; null for one that changes nothing. */
export function matchAuditRoute(method: string, path: string): AuditMatch | null {
  if (READS.has(method)) return null;
  const segments = trimSlash(path).split("/");
  for (const [m, pattern, route] of AUDITED_ROUTES) {
    if (m !== method) continue;
    const params = matchSegments(pattern.split("/"), segments);
    if (params) return { route, params };
  }
  return null;
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

function matchSegments(pattern: string[], segments: string[]): Record<string, string> | null {
  if (pattern.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i]!;
    const got = segments[i]!;
    if (want.startsWith(":")) {
      if (got === "") return null;
      try {
        params[want.slice(1)] = decodeURIComponent(got);
      } catch {
        return null;
      }
    } else if (want !== got) return null;
  }
  return params;
}

/** The code a refusal is recorded with when the reply carried none (a page re-rendered with an error). */
export function codeForStatus(status: number): string {
  if (status === 400) return "INVALID_REQUEST";
  if (status === 401) return "UNAUTHORIZED";
  if (status === 403) return "CSRF_REJECTED";
  if (status === 404) return "NOT_FOUND";
  if (status === 409) return "CONFLICT";
  if (status === 413) return "PAYLOAD_TOO_LARGE";
  if (status === 429) return "RATE_LIMIT_EXCEEDED";
  if (status >= 500) return "INTERNAL_ERROR";
  return "REFUSED";
}

/**
 * Whether a reply is worth a row. Refusals nobody could tie to a change are left out: a webhook
 * delivery is recorded once its signature held (a deploy started or was refused), an export start
 * not when it was only told to wait (429), since scripts retry those in a loop.
 */
export function isRecorded(route: AuditRoute, status: number): boolean {
  if (route.via === "webhook") return status === 202 || (status >= 402 && ![404, 413, 429].includes(status));
  if (route.via === "token") return status !== 401 && status !== 429;
  return true;
}

/** The names of a request body's fields (never their values), without the CSRF field. */
export function fieldNames(body: unknown): string[] {
  if (!body || typeof body !== "object" || Array.isArray(body)) return [];
  return Object.keys(body)
    .filter((k) => k !== "_csrf")
    .slice(0, 50)
    .map((k) => k.slice(0, 100));
}

/** An environment save's changes as field names: `added:KEY`, `changed:KEY`, `removed:KEY` (values only compared, never kept). */
export function envChanges(before: readonly { key: string; value: string }[], after: readonly { key: string; value: string }[]): string[] {
  const old = new Map(before.map((v) => [v.key, v.value]));
  const now = new Map(after.map((v) => [v.key, v.value]));
  const out: string[] = [];
  for (const [key, value] of now) {
    if (!old.has(key)) out.push(`added:${key}`);
    else if (old.get(key) !== value) out.push(`changed:${key}`);
  }
  for (const key of old.keys()) if (!now.has(key)) out.push(`removed:${key}`);
  return out;
}

/** An SQL run's audit fields: how many statements ran and how many rows they wrote (never the SQL). */
export function sqlRunFields(results: readonly { rows_written?: unknown }[]): string[] {
  const writes = results.reduce((n, r) => n + (typeof r.rows_written === "number" ? r.rows_written : 0), 0);
  return [`statements:${results.length}`, `rows_written:${writes}`];
}
