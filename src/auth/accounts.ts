import { eq } from "drizzle-orm";
import { database } from "../db/client";
import { accounts } from "../db/schema";

/**
 * Owner of the `accounts` table (with src/auth/, which owns `sessions` and `api_tokens`): every
 * query of it is here (test/unit/table-owners.test.ts); the console and the operator routes call it.
 */

/** Inserts an account; false when the email is taken. */
export async function insertAccount(env: Env, row: { id: string; email: string; passwordHash: string; createdAt: number }): Promise<boolean> {
  const inserted = await database(env).insert(accounts).values(row).onConflictDoNothing().returning({ id: accounts.id });
  return inserted.length === 1;
}

/** The account with this email, with its password hash, for a sign-in. */
export async function accountByEmail(env: Env, email: string): Promise<{ id: string; passwordHash: string } | undefined> {
  return database(env).select({ id: accounts.id, passwordHash: accounts.passwordHash }).from(accounts).where(eq(accounts.email, email)).get();
}

/** The account named by its id or its email (an operator's way of naming it). */
export async function findAccount(env: Env, idOrEmail: string): Promise<{ id: string; email: string } | undefined> {
  const column = idOrEmail.includes("@") ? accounts.email : accounts.id;
  return database(env).select({ id: accounts.id, email: accounts.email }).from(accounts).where(eq(column, idOrEmail.trim().toLowerCase())).get();
}

/** The email of an account, for the console's header. */
export async function accountEmail(env: Env, id: string): Promise<string | undefined> {
  return (await database(env).select({ email: accounts.email }).from(accounts).where(eq(accounts.id, id)).get())?.email;
}

/** An account's email and password hash, for a check of its current password. */
export async function accountCredentials(env: Env, id: string): Promise<{ email: string; passwordHash: string } | undefined> {
  return database(env).select({ email: accounts.email, passwordHash: accounts.passwordHash }).from(accounts).where(eq(accounts.id, id)).get();
}

/** Replaces an account's password hash. */
export async function setPasswordHash(env: Env, id: string, passwordHash: string): Promise<void> {
  await database(env).update(accounts).set({ passwordHash }).where(eq(accounts.id, id));
}
