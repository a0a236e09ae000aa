import { Hono } from "hono";
import { startSession, endSession } from "../../auth/session";
import {
  CODE_REQUIRED_MESSAGE,
  Credentials,
  SAME_ANSWER_FOR_BAD_LOGIN,
  SignIn,
  WRONG_CODE_MESSAGE,
  createAccount,
  limitSignUp,
  newPasswordProblem,
  signInAttempt,
} from "../../auth/sign-in";
import type { AppEnv } from "../../http/context";
import { ApiError, invalid } from "../../http/errors";
import { readJson } from "../../http/validate";

export const authRoutes = new Hono<AppEnv>()
  .post("/signup", async (c) => {
    const input = await readJson(c, Credentials);
    const problem = await newPasswordProblem(input.password);
    if (problem) throw invalid(`password: ${problem}`);
    await limitSignUp(c);
    const { now, uuid } = c.get("deps");
    const id = uuid();
    if (!(await createAccount(c.env, input, now(), id))) {
      throw new ApiError("CONFLICT", "An account with this email already exists. Sign in instead.");
    }
    await startSession(c, id);
    return c.json({ id, email: input.email });
  })
  .post("/login", async (c) => {
    const input = await readJson(c, SignIn);
    const result = await signInAttempt(c, input);
    if (!result.ok) {
      if (result.refused === "code_missing") throw new ApiError("TOTP_REQUIRED", CODE_REQUIRED_MESSAGE);
      throw new ApiError("UNAUTHORIZED", result.refused === "code_wrong" ? WRONG_CODE_MESSAGE : SAME_ANSWER_FOR_BAD_LOGIN);
    }
    await startSession(c, result.accountId);
    return c.json({ id: result.accountId, email: input.email });
  })
  .post("/logout", async (c) => {
    await endSession(c);
    return c.json({ success: true });
  });
