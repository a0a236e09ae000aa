import { Hono } from "hono";
import { z } from "zod";
import { and, desc, eq } from "drizzle-orm";
import { database } from "../../db/client";
import { apiTokens } from "../../db/schema";
import { generateToken, hashToken, tokenDisplayPrefix } from "../../auth/tokens";
import type { AppEnv } from "../../http/context";
import { notFound } from "../../http/errors";
import { readJson } from "../../http/validate";
import { iso } from "../../lib/time";

export const TokenName = z.object({
  name: z
    .string({ message: "Give the token a name." })
    .trim()
    .min(1, "Give the token a name.")
    .max(100, "Use at most 100 characters for the token name."),
});

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

/** Revokes at once: the row is gone, so the very next call with the token fails. */
export async function revokeToken(env: Env, accountId: string, id: string): Promise<boolean> {
  const deleted = await database(env)
    .delete(apiTokens)
    .where(and(eq(apiTokens.id, id), eq(apiTokens.accountId, accountId)))
    .returning({ id: apiTokens.id });
  return deleted.length === 1;
}

export const tokenRoutes = new Hono<AppEnv>()
  .get("/", async (c) => c.json({ tokens: await listTokens(c.env, c.get("accountId")!) }))
  .post("/", async (c) => {
    const { name } = await readJson(c, TokenName);
    const { now, uuid } = c.get("deps");
    return c.json(await createToken(c.env, c.get("accountId")!, name, now(), uuid()), 201);
  })
  .delete("/:id", async (c) => {
    if (!(await revokeToken(c.env, c.get("accountId")!, c.req.param("id")))) throw notFound("No such token.");
    return c.json({ success: true });
  });
