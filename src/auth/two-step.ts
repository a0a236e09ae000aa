import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/context";
import { ACCOUNT_FAILURES, clientAddress, ADDRESS_FAILURES, giveBack, spendFirst } from "../http/auth-limits";
import type { RatePolicy } from "../http/gcra";
import { accountEmail } from "./accounts";
import { enableTotp, removeTotp, setUpTotp, useSecondStep } from "./totp-store";

/**
 * Turning two-step sign-in on and off for the signed-in account. Each code tried spends from the
 * account's code allowance and the address's failure allowance first (as a sign-in does), and
 * gets it back when the code was right, so a stolen session cannot try codes at any pace.
 */

export const CodeInput = z.object({
  code: z.string({ message: "Enter the code from your authenticator app." }).trim().min(1, "Enter the code from your authenticator app.").max(64, "That code is too long."),
});

export const TOTP_ALREADY_ON = "Two-step sign-in is on already. Turn it off first to set it up with another app.";
export const WRONG_SETUP_CODE = "That code is not right. Enter the code your authenticator app shows now for this account.";
export const WRONG_DISABLE_CODE = "That code is not right, or it was used already. Enter the newest code from your authenticator app, or an unused recovery code.";

function codeKeys(c: Context<AppEnv>, accountId: string): [string, RatePolicy][] {
  return [
    [`auth-ip:${clientAddress(c)}`, ADDRESS_FAILURES],
    [`totp:${accountId}`, ACCOUNT_FAILURES],
  ];
}

/** A fresh secret and its `otpauth://` URL; undefined when two-step sign-in is on already. */
export async function startTotpSetup(c: Context<AppEnv>, accountId: string): Promise<{ secret: string; otpauth_url: string } | undefined> {
  const email = (await accountEmail(c.env, accountId)) ?? accountId;
  return setUpTotp(c.env, c.get("config").ENV_ENCRYPTION_KEY, { id: accountId, email }, c.get("deps").now());
}

/** Turns two-step sign-in on with a code from the set-up secret: the recovery codes, or null for a wrong code. */
export async function confirmTotp(c: Context<AppEnv>, accountId: string, code: string): Promise<string[] | null> {
  const keys = codeKeys(c, accountId);
  await spendFirst(c, keys);
  const codes = await enableTotp(c.env, c.get("config").ENV_ENCRYPTION_KEY, accountId, code, c.get("deps").now());
  if (codes) await giveBack(c, keys);
  return codes;
}

/** Turns two-step sign-in off with a current code or a recovery code; false for a wrong one. */
export async function turnOffTotp(c: Context<AppEnv>, accountId: string, code: string): Promise<boolean> {
  const keys = codeKeys(c, accountId);
  await spendFirst(c, keys);
  if (!(await useSecondStep(c.env, c.get("config").ENV_ENCRYPTION_KEY, accountId, code, c.get("deps").now()))) return false;
  await removeTotp(c.env, accountId);
  await giveBack(c, keys);
  return true;
}
