import { createRoute, z } from "@hono/zod-openapi";
import { orThrow } from "../actions/outcome";
import { CodeInput, PasswordChange, changePassword, endOneSession, endOtherSessionsOfAccount, listSessions, setUpTwoStep, turnOffTwoStep, turnOnTwoStep } from "../actions/security";
import { SessionView, Success } from "./account-schemas";
import { SIGNED_IN_REPLIES, consoleRouter, errorReply, jsonBody, jsonBodyFirst, jsonReply, pathParam } from "./openapi";

/** The signed-in account's sessions, password and two-step sign-in (mounted behind requireSession). */

const tags = ["Security"];
const CODE_REFUSED = errorReply("The code is missing, malformed or not right (`code: ...`).", ["INVALID_REQUEST"]);
const TOO_MANY = errorReply("Too many wrong answers; wait for `Retry-After` seconds.", ["RATE_LIMIT_EXCEEDED"]);

const listRoute = createRoute({
  method: "get",
  path: "/sessions",
  operationId: "listSessions",
  tags,
  summary: "List the account's sessions",
  description: "Its live sessions, the most recently seen first; the one asking has `current: true`.",
  responses: { 200: jsonReply(z.object({ sessions: z.array(SessionView) }), "The sessions."), ...SIGNED_IN_REPLIES },
});

const endOthersRoute = createRoute({
  method: "post",
  path: "/sessions/revoke-others",
  operationId: "endOtherSessions",
  tags,
  summary: "Sign out every other session",
  responses: { 200: jsonReply(Success.extend({ ended: z.number().int() }), "How many sessions ended."), ...SIGNED_IN_REPLIES },
});

const endOneRoute = createRoute({
  method: "delete",
  path: "/sessions/{id}",
  operationId: "endSession",
  tags,
  summary: "Sign one session out",
  description: "Ends the session at once; ending the session asking also clears its cookie.",
  request: { params: z.object({ id: pathParam("id", "The session's id, from the list.") }) },
  responses: { 200: jsonReply(Success, "Ended."), 404: errorReply("No such session in the account.", ["NOT_FOUND"]), ...SIGNED_IN_REPLIES },
});

const passwordRoute = createRoute({
  method: "post",
  path: "/password",
  operationId: "changePassword",
  tags,
  summary: "Change the password",
  description: "The current password must be right and the new one not among the 10,000 most common. Every other session ends.",
  middleware: [jsonBodyFirst] as const,
  request: { body: jsonBody(PasswordChange, "The current and the new password.") },
  responses: {
    200: jsonReply(Success.extend({ ended_sessions: z.number().int() }), "Changed; how many other sessions ended."),
    400: errorReply("A field is missing, the current password is wrong, or the new one is too common.", ["INVALID_REQUEST"]),
    429: TOO_MANY,
    ...SIGNED_IN_REPLIES,
  },
});

const setupRoute = createRoute({
  method: "post",
  path: "/totp/setup",
  operationId: "setUpTotp",
  tags,
  summary: "Begin setting up two-step sign-in",
  description: "A fresh secret for an authenticator app; confirm it with a code (`/totp/enable`) to turn two-step sign-in on.",
  responses: {
    200: jsonReply(z.object({ secret: z.string(), otpauth_url: z.string() }), "The secret, and its `otpauth://` URL for a QR code."),
    409: errorReply("Two-step sign-in is on already.", ["CONFLICT"]),
    ...SIGNED_IN_REPLIES,
  },
});

const enableRoute = createRoute({
  method: "post",
  path: "/totp/enable",
  operationId: "enableTotp",
  tags,
  summary: "Turn two-step sign-in on",
  middleware: [jsonBodyFirst] as const,
  request: { body: jsonBody(CodeInput, "A code the authenticator app shows for the new secret.") },
  responses: {
    200: jsonReply(z.object({ recovery_codes: z.array(z.string()) }), "On; the recovery codes, shown this once."),
    400: CODE_REFUSED,
    429: TOO_MANY,
    ...SIGNED_IN_REPLIES,
  },
});

const disableRoute = createRoute({
  method: "post",
  path: "/totp/disable",
  operationId: "disableTotp",
  tags,
  summary: "Turn two-step sign-in off",
  middleware: [jsonBodyFirst] as const,
  request: { body: jsonBody(CodeInput, "A current code, or an unused recovery code.") },
  responses: { 200: jsonReply(Success, "Off."), 400: CODE_REFUSED, 429: TOO_MANY, ...SIGNED_IN_REPLIES },
});

export const securityRoutes = consoleRouter()
  .openapi(listRoute, async (c) => c.json({ sessions: await listSessions(c) }, 200))
  .openapi(endOthersRoute, async (c) => c.json({ success: true as const, ended: await endOtherSessionsOfAccount(c) }, 200))
  .openapi(endOneRoute, async (c) => {
    orThrow(await endOneSession(c, c.req.valid("param").id));
    return c.json({ success: true as const }, 200);
  })
  .openapi(passwordRoute, async (c) => {
    const { endedSessions } = orThrow(await changePassword(c, c.req.valid("json")));
    return c.json({ success: true as const, ended_sessions: endedSessions }, 200);
  })
  .openapi(setupRoute, async (c) => c.json(orThrow(await setUpTwoStep(c)).setup, 200))
  .openapi(enableRoute, async (c) => c.json({ recovery_codes: orThrow(await turnOnTwoStep(c, c.req.valid("json").code)).recoveryCodes }, 200))
  .openapi(disableRoute, async (c) => {
    orThrow(await turnOffTwoStep(c, c.req.valid("json").code));
    return c.json({ success: true as const }, 200);
  });
