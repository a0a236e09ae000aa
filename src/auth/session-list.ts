import { and, desc, eq, gt, ne } from "drizzle-orm";
import { database } from "../db/client";
import { sessions } from "../db/schema";
import { iso } from "../lib/time";

/**
 * The account's sessions as the profile lists them, and ending them. A session ends at once: its
 * row is gone, so the next request with its cookie is signed out (session.ts reads the row on
 * every request).
 */

export interface SessionView {
  id: string;
  created_at: string;
  last_seen_at: string;
  address: string | null;
  user_agent: string | null;
  current: boolean;
}

/** The account's live sessions, the most recently seen first; `currentId` is marked current. */
export async function listSessions(env: Env, accountId: string, currentId: string | undefined, now: number): Promise<SessionView[]> {
  const rows = await database(env)
    .select({ id: sessions.id, createdAt: sessions.createdAt, lastSeenAt: sessions.lastSeenAt, address: sessions.address, userAgent: sessions.userAgent })
    .from(sessions)
    .where(and(eq(sessions.accountId, accountId), gt(sessions.expiresAt, now)))
    .orderBy(desc(sessions.lastSeenAt), desc(sessions.createdAt));
  return rows.map((r) => ({
    id: r.id,
    created_at: iso(r.createdAt),
    last_seen_at: iso(r.lastSeenAt ?? r.createdAt),
    address: r.address,
    user_agent: r.userAgent,
    current: r.id === currentId,
  }));
}

/** Ends one session of the account; false when it has no such session. */
export async function endSessionById(env: Env, accountId: string, id: string): Promise<boolean> {
  const ended = await database(env)
    .delete(sessions)
    .where(and(eq(sessions.accountId, accountId), eq(sessions.id, id)))
    .returning({ id: sessions.id });
  return ended.length === 1;
}

/** Ends every session of the account but `keepId` (the one asking); how many live ones were ended. */
export async function endOtherSessions(env: Env, accountId: string, keepId: string, now: number): Promise<number> {
  const ended = await database(env)
    .delete(sessions)
    .where(and(eq(sessions.accountId, accountId), ne(sessions.id, keepId)))
    .returning({ expiresAt: sessions.expiresAt });
  return ended.filter((s) => s.expiresAt > now).length;
}
