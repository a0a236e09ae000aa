import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { Hono } from "hono";
import { z } from "zod";
import { accountEmail } from "../../auth/accounts";
import { finishRegistration, finishSignIn, listPasskeys, registrationOptions, relyingParty, removePasskey, signInOptions } from "../../auth/passkeys";
import { requireSession, startSession } from "../../auth/session";
import type { AppEnv } from "../../http/context";
import { checkAllowance, clientAddress, ADDRESS_FAILURES, spendAllowance } from "../../http/auth-limits";
import { ApiError, invalid, notFound } from "../../http/errors";
import type { RatePolicy } from "../../http/gcra";
import { readJson } from "../../http/validate";

/** A WebAuthn answer as @simplewebauthn/browser sends it; the library checks the rest. */
const Credential = z.looseObject({ id: z.string().min(1).max(1024), response: z.looseObject({ clientDataJSON: z.string() }) });

export const PasskeyName = z
  .string({ message: "Give the passkey a name." })
  .trim()
  .min(1, "Give the passkey a name.")
  .max(100, "Use at most 100 characters for the passkey name.");

const NewPasskey = z.object({ name: PasskeyName, response: Credential });
const PasskeySignIn = z.object({ response: Credential });

const NOT_VERIFIED = "The passkey could not be verified. Try again.";

/** Failed passkey sign-ins count against the client address like wrong passwords. */
const signInKeys = (c: Parameters<typeof clientAddress>[0]): [string, RatePolicy][] => [[`auth-ip:${clientAddress(c)}`, ADDRESS_FAILURES]];

/**
 * Passkeys under `/console/api/passkeys`: list, add (options, then the browser's answer), remove,
 * and sign in with one (options, then the answer: a session starts, no password asked).
 */
export const passkeyRoutes = new Hono<AppEnv>()
  .get("/", requireSession, async (c) => c.json({ passkeys: await listPasskeys(c.env, c.get("accountId")!) }))
  .post("/register/options", requireSession, async (c) => {
    const accountId = c.get("accountId")!;
    const email = (await accountEmail(c.env, accountId)) ?? accountId;
    return c.json(await registrationOptions(c.env, relyingParty(c.req.url), { id: accountId, email }, c.get("deps").now()));
  })
  .post("/register", requireSession, async (c) => {
    const input = await readJson(c, NewPasskey);
    const saved = await finishRegistration(c.env, relyingParty(c.req.url), {
      accountId: c.get("accountId")!,
      name: input.name,
      response: input.response as unknown as RegistrationResponseJSON,
      now: c.get("deps").now(),
    });
    if (!saved) throw invalid(`response: ${NOT_VERIFIED}`);
    return c.json(saved, 201);
  })
  .delete("/:id", requireSession, async (c) => {
    if (!(await removePasskey(c.env, c.get("accountId")!, c.req.param("id")))) throw notFound("No such passkey in your account.");
    return c.json({ success: true });
  })
  .post("/signin/options", async (c) => c.json(await signInOptions(c.env, relyingParty(c.req.url), c.get("deps").now())))
  .post("/signin", async (c) => {
    const input = await readJson(c, PasskeySignIn);
    const keys = signInKeys(c);
    await checkAllowance(c, keys);
    const now = c.get("deps").now();
    const found = await finishSignIn(c.env, relyingParty(c.req.url), input.response as unknown as AuthenticationResponseJSON, now);
    if (!found) {
      await spendAllowance(c, keys);
      throw new ApiError("UNAUTHORIZED", NOT_VERIFIED);
    }
    await startSession(c, found.accountId);
    return c.json({ id: found.accountId, email: await accountEmail(c.env, found.accountId), passkey: { id: found.passkeyId, name: found.name } });
  });
