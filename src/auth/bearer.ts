import type { MiddlewareHandler } from "hono";
import { eq } from "drizzle-orm";
import { database } from "../db/client";
import { apiTokens } from "../db/schema";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { hashToken, isWellFormedToken } from "./tokens";

/** Last-used is written at most this often per token, not on every call. */
export const LAST_USED_RESOLUTION_MS = 60_000;

const unauthorized = () =>
  new ApiError("UNAUTHORIZED", "A valid API token is required: send `Authorization: Bearer <token>`.");

/** Resolves `Authorization: Bearer <token>` to an account; anything else is 401 UNAUTHORIZED. */
export function bearerAuth(): MiddlewareHandler<AppEnv> {
  return async function bearerAuth(c, next) {
    const match = /^Bearer ([^\s]+)$/i.exec(c.req.header("Authorization") ?? "");
    const token = match?.[1];
    if (!token || !isWellFormedToken(token)) throw unauthorized();
    const db = database(c.env);
    const tokenHash = await hashToken(token);
    const row = await db
      .select({ id: apiTokens.id, accountId: apiTokens.accountId, lastUsedAt: apiTokens.lastUsedAt })
      .from(apiTokens)
      .where(eq(apiTokens.tokenHash, tokenHash))
      .get();
    if (!row) throw unauthorized();
    c.set("accountId", row.accountId);
    const now = c.get("deps").now();
    if (row.lastUsedAt === null || now - row.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
      c.executionCtx.waitUntil(db.update(apiTokens).set({ lastUsedAt: now }).where(eq(apiTokens.id, row.id)).run());
    }
    await next();
  };
}
