import { createRoute } from "@hono/zod-openapi";
import { Credentials, SignIn, signIn, signOut, signUp } from "../actions/account";
import { orThrow } from "../actions/outcome";
import { AccountReply, Success } from "./account-schemas";
import { consoleRouter, errorReply, jsonBody, jsonBodyFirst, jsonReply } from "./openapi";

/** Signing up, in (password, and a code for an account with two-step sign-in) and out; open to anyone. */

const TOO_MANY = errorReply("Too many attempts from this address (or on this account); wait for `Retry-After` seconds.", ["RATE_LIMIT_EXCEEDED"]);

const signUpRoute = createRoute({
  method: "post",
  path: "/signup",
  operationId: "signUp",
  tags: ["Account"],
  summary: "Create an account and sign in",
  description: "Creates the account and starts a session (its cookie is set). A password among the 10,000 most common is refused.",
  security: [],
  middleware: [jsonBodyFirst] as const,
  request: { body: jsonBody(Credentials, "The email address and password.") },
  responses: {
    200: jsonReply(AccountReply, "Signed up and in."),
    400: errorReply("A field is missing or not valid, or the password is too common.", ["INVALID_REQUEST"]),
    409: errorReply("An account with this email exists already.", ["CONFLICT"]),
    429: TOO_MANY,
  },
});

const signInRoute = createRoute({
  method: "post",
  path: "/login",
  operationId: "signIn",
  tags: ["Account"],
  summary: "Sign in with the password",
  description: "Starts a session. An account with two-step sign-in also needs `code` (a current code or an unused recovery code): without one the answer is 401 TOTP_REQUIRED.",
  security: [],
  middleware: [jsonBodyFirst] as const,
  request: { body: jsonBody(SignIn, "The email address, password and, for two-step sign-in, the code.") },
  responses: {
    200: jsonReply(AccountReply, "Signed in."),
    400: errorReply("A field is missing or not valid.", ["INVALID_REQUEST"]),
    401: errorReply("The email or password is not right (one answer for both), the code is missing or wrong.", ["UNAUTHORIZED", "TOTP_REQUIRED"]),
    429: TOO_MANY,
  },
});

const signOutRoute = createRoute({
  method: "post",
  path: "/logout",
  operationId: "signOut",
  tags: ["Account"],
  summary: "Sign out",
  description: "Ends this session and clears its cookie.",
  security: [],
  responses: { 200: jsonReply(Success, "Signed out.") },
});

export const authRoutes = consoleRouter()
  .openapi(signUpRoute, async (c) => c.json(orThrow(await signUp(c, c.req.valid("json"))).account, 200))
  .openapi(signInRoute, async (c) => c.json(orThrow(await signIn(c, c.req.valid("json"))).account, 200))
  .openapi(signOutRoute, async (c) => {
    await signOut(c);
    return c.json({ success: true as const }, 200);
  });
