import { Hono } from "hono";
import { endSession } from "../../auth/session";
import { endOtherSessions, endSessionById, listSessions } from "../../auth/session-list";
import { PasswordChange, changePassword } from "../../auth/sign-in";
import { CodeInput, TOTP_ALREADY_ON, WRONG_DISABLE_CODE, WRONG_SETUP_CODE, confirmTotp, startTotpSetup, turnOffTotp } from "../../auth/two-step";
import type { AppEnv } from "../../http/context";
import { ApiError, invalid, notFound } from "../../http/errors";
import { readJson } from "../../http/validate";

/** The signed-in account's sessions, password and two-step sign-in (mounted behind requireSession). */
export const securityRoutes = new Hono<AppEnv>()
  .get("/sessions", async (c) => {
    const sessions = await listSessions(c.env, c.get("accountId")!, c.get("session")?.id, c.get("deps").now());
    return c.json({ sessions });
  })
  .post("/sessions/revoke-others", async (c) => {
    const ended = await endOtherSessions(c.env, c.get("accountId")!, c.get("session")!.id, c.get("deps").now());
    return c.json({ success: true, ended });
  })
  .delete("/sessions/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await endSessionById(c.env, c.get("accountId")!, id))) throw notFound("No such session in your account. It may have ended already.");
    if (id === c.get("session")?.id) await endSession(c);
    return c.json({ success: true });
  })
  .post("/password", async (c) => {
    const input = await readJson(c, PasswordChange);
    const result = await changePassword(c, c.get("accountId")!, c.get("session")!.id, input);
    if (!result.ok) throw invalid(`${result.field}: ${result.message}`);
    return c.json({ success: true, ended_sessions: result.endedSessions });
  })
  .post("/totp/setup", async (c) => {
    const setup = await startTotpSetup(c, c.get("accountId")!);
    if (!setup) throw new ApiError("CONFLICT", TOTP_ALREADY_ON);
    return c.json(setup);
  })
  .post("/totp/enable", async (c) => {
    const { code } = await readJson(c, CodeInput);
    const recoveryCodes = await confirmTotp(c, c.get("accountId")!, code);
    if (!recoveryCodes) throw invalid(`code: ${WRONG_SETUP_CODE}`);
    return c.json({ recovery_codes: recoveryCodes });
  })
  .post("/totp/disable", async (c) => {
    const { code } = await readJson(c, CodeInput);
    if (!(await turnOffTotp(c, c.get("accountId")!, code))) throw invalid(`code: ${WRONG_DISABLE_CODE}`);
    return c.json({ success: true });
  });
