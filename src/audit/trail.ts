import type { Context, MiddlewareHandler } from "hono";
import { getOwnedApp, getApp } from "../apps/store";
import { accountByEmail, accountEmail, findAccount } from "../auth/accounts";
import { type AuditRecord, appendAudit, passkeyName, tokenName } from "../auth/audit-store";
import { requestTokenRow } from "../auth/bearer";
import { loadSession } from "../auth/session";
import { getOwnedDatabase } from "../databases/service";
import { readEnv } from "../envvars/store";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { log } from "../http/log";
import "./note";
import { readDelivery } from "../webhooks/signature";
import { type AuditMatch, type ResourceKind, codeForStatus, envChanges, fieldNames, isRecorded, matchAuditRoute, sqlRunFields } from "./actions";

/** What is known before the handler runs: the account, the resource's name, an env set to compare. */
interface Before {
  accountId?: string;
  name: string | null;
  env?: { key: string; value: string }[];
}

/**
 * The audit middleware: every request that matches an audited route (actions.ts) leaves one row,
 * written before the reply leaves (no promise kept only in memory): who (session, token, webhook,
 * operator), from where, the action and resource, the names of the fields sent (never a value),
 * the outcome with its code, and the request id. A row that cannot be written is logged, and the
 * reply stands: the change it describes has already happened.
 */
export function auditTrail(): MiddlewareHandler<AppEnv> {
  return async function auditTrail(c, next) {
    const match = matchAuditRoute(c.req.method, c.req.path);
    if (!match) return next();
    let before: Before = { name: null };
    try {
      before = await beforeChange(c, match);
    } catch {
      // A lookup that fails leaves the name out; the request itself decides the rest.
    }
    await next();
    if (!isRecorded(match.route, c.res.status)) return;
    try {
      const record = await describe(c, match, before);
      if (record) await appendAudit(c.env, record);
    } catch (err) {
      log("error", "audit row not written", { request_id: c.get("requestId"), action: match.route.action, error: String(err) });
    }
  };
}

async function beforeChange(c: Context<AppEnv>, match: AuditMatch): Promise<Before> {
  const { route, params } = match;
  const id = route.param ? params[route.param] : undefined;
  if (route.via === "webhook") {
    const app = id ? await getApp(c.env, id.toLowerCase()).catch(() => undefined) : undefined;
    return { accountId: app?.accountId, name: app?.name ?? null };
  }
  if (route.via === "operator") {
    const account = id ? await findAccount(c.env, id) : undefined;
    return { accountId: account?.id, name: account?.email ?? null };
  }
  // A sign-in or sign-up belongs to the account it signs into, not to a session the browser still had.
  const signsIn = route.action.startsWith("signin.") || route.action === "account.signup";
  if (route.via !== "token" && !signsIn && !c.get("session")) await loadSession(c);
  const accountId = c.get("accountId");
  if (!accountId || !id) return { accountId, name: null };
  const name = await resourceName(c.env, accountId, route.resource, id);
  if (route.action !== "env.save") return { accountId, name };
  const set = await readEnv(c.env, params.id!);
  return { accountId, name, env: set?.variables };
}

async function resourceName(env: Env, accountId: string, kind: ResourceKind, id: string): Promise<string | null> {
  const quietly = <T>(p: Promise<T>) => p.catch(() => undefined);
  if (kind === "app") return (await quietly(getOwnedApp(env, accountId, id)))?.name ?? null;
  if (kind === "database") return (await quietly(getOwnedDatabase(env, accountId, id)))?.name ?? null;
  if (kind === "token") return tokenName(env, accountId, id);
  if (kind === "passkey") return passkeyName(env, accountId, id);
  if (kind === "domain") return id.toLowerCase();
  return null;
}

async function describe(c: Context<AppEnv>, match: AuditMatch, before: Before): Promise<AuditRecord | null> {
  const { route } = match;
  const body = await requestBody(c, match);
  const accountId = c.get("accountId") ?? before.accountId ?? (await signInAccount(c, route.action, body));
  if (!accountId) return null;
  const status = c.res.status;
  const refused = status >= 400 || c.get("auditRefused") === true;
  const reply = refused ? undefined : await replyBody(c);
  const resource = await resourceOf(c, match, before, accountId, body, reply);
  return {
    accountId,
    at: c.get("deps").now(),
    actor: await actorOf(c, match, accountId),
    address: c.req.header("CF-Connecting-IP")?.slice(0, 64) ?? null,
    userAgent: c.req.header("User-Agent")?.slice(0, 512) ?? null,
    action: route.action,
    resource: { kind: route.resource, ...resource },
    fields: await fieldsOf(c, match, before, body, reply, refused),
    outcome: refused ? "refused" : "done",
    code: refused ? refusalCode(c, status) : null,
    requestId: c.get("requestId") ?? null,
  };
}

function refusalCode(c: Context<AppEnv>, status: number): string {
  if (c.error instanceof ApiError) return c.error.code;
  return status < 400 ? "REFUSED" : codeForStatus(status);
}

/** A failed password sign-in names an account by its email: the row goes to that account's log. */
async function signInAccount(c: Context<AppEnv>, action: string, body: Record<string, unknown> | undefined): Promise<string | undefined> {
  if (action !== "signin.password" || typeof body?.email !== "string") return undefined;
  return (await accountByEmail(c.env, body.email.trim().toLowerCase()))?.id;
}

async function actorOf(c: Context<AppEnv>, match: AuditMatch, accountId: string): Promise<AuditRecord["actor"]> {
  const via = match.route.via ?? "session";
  if (via === "operator") return { kind: "operator", id: null, name: "operator" };
  if (via === "webhook") {
    const delivery = readDelivery((name) => c.req.header(name) ?? null);
    return { kind: "webhook", id: delivery?.id?.slice(0, 100) ?? null, name: delivery?.forge ?? null };
  }
  if (via === "token") {
    const row = await requestTokenRow(c);
    return { kind: "token", id: row?.id ?? null, name: row ? await tokenName(c.env, accountId, row.id) : null };
  }
  const session = c.get("session");
  if (!session) return { kind: "visitor", id: null, name: null };
  return { kind: "session", id: session.id ?? null, name: (await accountEmail(c.env, accountId)) ?? null };
}

async function resourceOf(
  c: Context<AppEnv>,
  match: AuditMatch,
  before: Before,
  accountId: string,
  body: Record<string, unknown> | undefined,
  reply: Record<string, unknown> | undefined,
): Promise<{ id: string | null; name: string | null }> {
  const { route, params } = match;
  if (route.resource === "account" || route.resource === "totp") return { id: accountId, name: (await accountEmail(c.env, accountId)) ?? null };
  if (route.resource === "wallet") return { id: accountId, name: before.name };
  if (route.resource === "session") return { id: params.id ?? c.get("session")?.id ?? null, name: null };
  if (route.resource === "domain") {
    const host = params.hostname ?? (typeof body?.hostname === "string" ? body.hostname : null);
    return { id: host?.trim().toLowerCase() ?? null, name: host?.trim().toLowerCase() ?? null };
  }
  const id = (route.param ? params[route.param] : undefined) ?? createdId(c, reply);
  const bodyName = typeof body?.name === "string" ? body.name.trim().slice(0, 200) : null;
  const name = before.name ?? (id ? await resourceName(c.env, accountId, route.resource, id) : null) ?? bodyName;
  return { id: id ?? null, name };
}

/** A created resource's id: the JSON reply's `id`, or the page the form redirected to. */
function createdId(c: Context<AppEnv>, reply: Record<string, unknown> | undefined): string | undefined {
  if (typeof reply?.id === "string") return reply.id;
  const location = c.res.headers.get("Location") ?? "";
  return /\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:[/?#]|$)/i.exec(location)?.[1];
}

async function fieldsOf(
  c: Context<AppEnv>,
  match: AuditMatch,
  before: Before,
  body: Record<string, unknown> | undefined,
  reply: Record<string, unknown> | undefined,
  refused: boolean,
): Promise<string[]> {
  const action = match.route.action;
  if (action === "env.save" && !refused && before.env) {
    const after = await readEnv(c.env, match.params.id!);
    return after ? envChanges(before.env, after.variables) : [];
  }
  const noted = c.get("auditFields");
  if (noted) return noted;
  if (action === "database.sql" && Array.isArray(reply?.results)) return sqlRunFields(reply.results as { rows_written?: unknown }[]);
  return fieldNames(body);
}

/** The request's JSON or form body (for field names and a sign-in's email), never for webhooks or uploads. */
async function requestBody(c: Context<AppEnv>, match: AuditMatch): Promise<Record<string, unknown> | undefined> {
  if (match.route.via === "webhook") return undefined;
  const type = c.req.header("Content-Type") ?? "";
  try {
    if (type.startsWith("application/json")) return (await c.req.json()) as Record<string, unknown>;
    if (type.startsWith("application/x-www-form-urlencoded")) return (await c.req.parseBody()) as Record<string, unknown>;
  } catch {
    // An unreadable body has no field names.
  }
  return undefined;
}

/** A successful JSON reply's body (a created resource's id, an SQL run's counts). */
async function replyBody(c: Context<AppEnv>): Promise<Record<string, unknown> | undefined> {
  if (!(c.res.headers.get("Content-Type") ?? "").startsWith("application/json")) return undefined;
  try {
    const body = (await c.res.clone().json()) as unknown;
    return body && typeof body === "object" ? (body as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
