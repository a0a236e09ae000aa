import type { Context } from "hono";
import { z } from "zod";
import { createToken as saveToken, listTokens as tokensOf, revokeToken as deleteToken, type TokenView } from "../../auth/token-store";
import type { AppEnv } from "../../http/context";

/**
 * The account's API tokens: list, create (the secret is in that answer only), revoke. The JSON
 * routes (api/tokens.ts) and the profile page (profile-pages.tsx) both call these.
 */

export const TokenName = z.object({
  name: z
    .string({ message: "Give the token a name." })
    .trim()
    .min(1, "Give the token a name.")
    .max(100, "Use at most 100 characters for the token name."),
});

export type { TokenView };
export type NewToken = Awaited<ReturnType<typeof saveToken>>;

export async function listTokens(c: Context<AppEnv>): Promise<TokenView[]> {
  return tokensOf(c.env, c.get("accountId")!);
}

/** One of the account's tokens, or null (another account's answers the same as none). */
export async function findToken(c: Context<AppEnv>, id: string): Promise<TokenView | null> {
  return (await listTokens(c)).find((t) => t.id === id) ?? null;
}

export async function createToken(c: Context<AppEnv>, name: string): Promise<NewToken> {
  const { now, uuid } = c.get("deps");
  return saveToken(c.env, c.get("accountId")!, name, now(), uuid());
}

/** Revokes one of the account's tokens at once: its name, or null when it has no such token. */
export async function revokeToken(c: Context<AppEnv>, id: string): Promise<string | null> {
  return deleteToken(c.env, c.get("accountId")!, id);
}
