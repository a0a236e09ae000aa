import { and, desc, eq } from "drizzle-orm";
import { database } from "../db/client";
import { apiTokens } from "../db/schema";
import { iso } from "../lib/time";
import { generateToken, hashToken, tokenDisplayPrefix } from "./tokens";

/**
 * The console's side of the `api_tokens` table (owner: src/auth/, with bearer.ts checking tokens
 * on the API): list, create, revoke.
 */

export interface TokenView {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
}

export async function listTokens(env: Env, accountId: string): Promise<TokenView[]> {
  const rows = await database(env)
    .select()
    .from(apiTokens)
    .where(eq(apiTokens.accountId, accountId))
    .orderBy(desc(apiTokens.createdAt));
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    created_at: iso(r.createdAt),
    last_used_at: r.lastUsedAt === null ? null : iso(r.lastUsedAt),
  }));
}

/** Creates a token; the secret is in the reply and nowhere else, ever. */
export async function createToken(env: Env, accountId: string, name: string, now: number, id: string) {
  const token = generateToken();
  const prefix = tokenDisplayPrefix(token);
  await database(env)
    .insert(apiTokens)
    .values({ id, accountId, name, prefix, tokenHash: await hashToken(token), createdAt: now });
  return { id, name, prefix, created_at: iso(now), token };
}

/** Revokes at once: the row is gone, so the very next call with the token fails. Its name, or null when there was no such token. */
export async function revokeToken(env: Env, accountId: string, id: string): Promise<string | null> {
  const deleted = await database(env)
    .delete(apiTokens)
    .where(and(eq(apiTokens.id, id), eq(apiTokens.accountId, accountId)))
    .returning({ name: apiTokens.name });
  return deleted[0]?.name ?? null;
}

