import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { z } from "zod";
import { creditOnce } from "../billing/credit-requests";
import { addCredit, walletBalance } from "../billing/ledger";
import { findAccount } from "../auth/accounts";
import type { AppEnv } from "../http/context";
import { ApiError, notFound } from "../http/errors";
import { log } from "../http/log";
import { readJson } from "../http/validate";
import { iso } from "../lib/time";
import { readIdempotencyKey } from "./idempotency-key";
import { operatorAuth } from "./operator-auth";

/**
 * Operator routes: how money gets into a wallet (there is no payment processor). Guarded by
 * `Authorization: Bearer <OPERATOR_TOKEN>`; failures are limited per client address before the
 * token is compared, and no token is ever logged.
 *
 * A credit sent with an `Idempotency-Key` is written once per key: a retry with the same key and
 * request gets the first call's reply (201, the same entry and balance, `Idempotent-Replayed:
 * true`) and credits nothing; the key with another account, amount or note answers 422
 * `IDEMPOTENCY_KEY_REUSED` (src/billing/credit-requests.ts).
 */

/** Largest single credit, so a typo of a few extra digits is refused: 10,000,000 DA. */
export const MAX_CREDIT_DA = 10_000_000;

export const CreditRequest = z.object({
  amount: z
    .number({ message: "Send the amount in whole DA." })
    .int("The amount is whole DA: no fractions.")
    .min(1, "The amount must be at least 1 DA.")
    .max(MAX_CREDIT_DA, `The amount can be at most ${MAX_CREDIT_DA.toLocaleString("en-US")} DA at once.`),
  note: z.string({ message: "Say what the credit is for in `note`." }).trim().min(1, "Say what the credit is for in `note`.").max(200, "Use at most 200 characters for the note."),
});

const OPERATOR_BODY_BYTES = 16 * 1024;
const operatorBodyLimit = bodyLimit({
  maxSize: OPERATOR_BODY_BYTES,
  onError: () => {
    throw new ApiError("PAYLOAD_TOO_LARGE", `The request body is larger than ${OPERATOR_BODY_BYTES / 1024} KiB.`);
  },
});

// Guards on the route itself, so a wrong method still gets the derived 405.
export const adminRoutes = new Hono<AppEnv>().post("/accounts/:account/credits", operatorAuth(), operatorBodyLimit, async (c) => {
  const idempotency = readIdempotencyKey(c.req.header("Idempotency-Key"));
  if (!idempotency.ok) throw new ApiError("INVALID_REQUEST", idempotency.message);
  const { amount, note } = await readJson(c, CreditRequest);
  const account = await findAccount(c.env, decodeURIComponent(c.req.param("account")));
  if (!account) throw notFound("No account with this id or email exists.");
  const { now, uuid } = c.get("deps");
  const at = now();
  const id = uuid();
  if (idempotency.key !== null) {
    const outcome = await creditOnce(c.env, idempotency.key, { id, accountId: account.id, amount, note, at });
    if (outcome.kind === "reused") {
      throw new ApiError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was already used for another credit (another account, amount or note). Use a new key for a new credit.");
    }
    if (outcome.replayed) c.header("Idempotent-Replayed", "true");
    else log("info", "wallet credited", { account_id: account.id, amount });
    return c.json(outcome.reply, 201);
  }
  await addCredit(c.env, { id, accountId: account.id, amount, note, at });
  log("info", "wallet credited", { account_id: account.id, amount });
  return c.json({ id, account_id: account.id, amount, note, at: iso(at), balance: await walletBalance(c.env, account.id), currency: "DA" }, 201);
});
