import type { MiddlewareHandler } from "hono";
import { eq } from "drizzle-orm";
import { database } from "../db/client";
import { apiTokens } from "../db/schema";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { perRequest } from "../http/per-request";
import { hashToken, isWellFormedToken } from "./tokens";

/** Last-used is written at most this often per token, not on every call. */
export const LAST_USED_RESOLUTION_MS = 60_000;

const unauthorized = () =>
  new ApiError("UNAUTHORIZED", "A valid API token is required: send `Authorization: Bearer <token>`.");

/** The token row the request's `Authorization: Bearer <token>` names; null for none, a malformed one or an unknown one. */
type TokenRow = { id: string; accountId: string; lastUsedAt: number | null };

/**
 * The request's token looked up once, however many ask. `lookUpTokenAhead` starts it while the
 * middleware after it runs (the client address's failure limit), so the two round trips overlap.
 * What it found is used only by bearerAuth, which runs after that limit has let the request
 * through: a refused address learns nothing of its token.
 */
const tokenRow = perRequest(async (c): Promise<TokenRow | null> => {
  const match = /^Bearer ([^\s]+)$/i.exec(c.req.header("Authorization") ?? "");
  const token = match?.[1];
  if (!token || !isWellFormedToken(token)) return null;
  const row = await database(c.env)
    .select({ id: apiTokens.id, accountId: apiTokens.accountId, lastUsedAt: apiTokens.lastUsedAt })
    .from(apiTokens)
    .where(eq(apiTokens.tokenHash, await hashToken(token)))
    .get();
  return row ?? null;
});

export const lookUpTokenAhead = tokenRow.ahead;
/** The request's token row, from the same one lookup (the audit log names the token that acted). */
export const requestTokenRow = tokenRow.get;

/** Resolves `Authorization: Bearer <token>` to an account; anything else is 401 UNAUTHORIZED. */
export function bearerAuth(): MiddlewareHandler<AppEnv> {
  return async function bearerAuth(c, next) {
    const row = await tokenRow.get(c);
    if (!row) throw unauthorized();
    c.set("accountId", row.accountId);
    const now = c.get("deps").now();
    if (row.lastUsedAt === null || now - row.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
      c.executionCtx.waitUntil(database(c.env).update(apiTokens).set({ lastUsedAt: now }).where(eq(apiTokens.id, row.id)).run());
    }
    await next();
  };
}
