import { createRoute, z } from "@hono/zod-openapi";
import { requireSession } from "../../auth/session";
import { notFound } from "../../http/errors";
import { orThrow } from "../actions/outcome";
import { NewPasskey, PasskeySignIn, addPasskey, listPasskeys, passkeyOptions, passkeySignInOptions, removePasskey, signInWithPasskey } from "../actions/passkeys";
import { PasskeyView, Success, WebAuthnOptions } from "./account-schemas";
import { SIGNED_IN_REPLIES, consoleRouter, errorReply, jsonBody, jsonBodyFirst, jsonReply, pathParam } from "./openapi";

/**
 * Passkeys under `/console/api/passkeys`: list, add (options, then the browser's answer), remove,
 * and sign in with one (options, then the answer: a session starts, no password asked).
 */

const tags = ["Passkeys"];

const listRoute = createRoute({
  method: "get",
  path: "/",
  operationId: "listPasskeys",
  tags,
  summary: "List the account's passkeys",
  middleware: [requireSession] as const,
  responses: { 200: jsonReply(z.object({ passkeys: z.array(PasskeyView) }), "The passkeys, newest first."), ...SIGNED_IN_REPLIES },
});

const optionsRoute = createRoute({
  method: "post",
  path: "/register/options",
  operationId: "passkeyRegistrationOptions",
  tags,
  summary: "Begin adding a passkey",
  description: "Options for `navigator.credentials.create`, with a challenge answerable once within five minutes.",
  middleware: [requireSession] as const,
  responses: { 200: jsonReply(WebAuthnOptions, "The registration options."), ...SIGNED_IN_REPLIES },
});

const registerRoute = createRoute({
  method: "post",
  path: "/register",
  operationId: "addPasskey",
  tags,
  summary: "Add a passkey",
  description: "The browser's answer to the registration options, and a name for the passkey.",
  middleware: [requireSession, jsonBodyFirst] as const,
  request: { body: jsonBody(NewPasskey, "The passkey's name and the browser's `RegistrationResponseJSON`.") },
  responses: {
    201: jsonReply(PasskeyView, "Added."),
    400: errorReply("A field is missing, or the answer does not verify (`response: ...`).", ["INVALID_REQUEST"]),
    ...SIGNED_IN_REPLIES,
  },
});

const removeRoute = createRoute({
  method: "delete",
  path: "/{id}",
  operationId: "removePasskey",
  tags,
  summary: "Remove a passkey",
  middleware: [requireSession] as const,
  request: { params: z.object({ id: pathParam("id", "The passkey's id.") }) },
  responses: { 200: jsonReply(Success, "Removed: it no longer signs in."), 404: errorReply("No such passkey in the account.", ["NOT_FOUND"]), ...SIGNED_IN_REPLIES },
});

const signInOptionsRoute = createRoute({
  method: "post",
  path: "/signin/options",
  operationId: "passkeySignInOptions",
  tags,
  summary: "Begin signing in with a passkey",
  description: "Options for `navigator.credentials.get`; no email is asked, the browser offers the site's passkeys.",
  security: [],
  responses: { 200: jsonReply(WebAuthnOptions, "The authentication options.") },
});

const signInRoute = createRoute({
  method: "post",
  path: "/signin",
  operationId: "signInWithPasskey",
  tags,
  summary: "Sign in with a passkey",
  description: "The browser's answer to the sign-in options; a session starts (its cookie is set). Failures count against the address like wrong passwords.",
  security: [],
  middleware: [jsonBodyFirst] as const,
  request: { body: jsonBody(PasskeySignIn, "The browser's `AuthenticationResponseJSON`.") },
  responses: {
    200: jsonReply(
      z.object({ id: z.string(), email: z.string().optional(), passkey: z.object({ id: z.string(), name: z.string() }) }),
      "Signed in: the account and the passkey used.",
    ),
    400: errorReply("The body is missing or malformed.", ["INVALID_REQUEST"]),
    401: errorReply("The passkey could not be verified.", ["UNAUTHORIZED"]),
    429: errorReply("Too many failures from this address; wait for `Retry-After` seconds.", ["RATE_LIMIT_EXCEEDED"]),
  },
});

export const passkeyRoutes = consoleRouter()
  .openapi(listRoute, async (c) => c.json({ passkeys: await listPasskeys(c) }, 200))
  .openapi(optionsRoute, async (c) => c.json(await passkeyOptions(c), 200))
  .openapi(registerRoute, async (c) => c.json(orThrow(await addPasskey(c, c.req.valid("json"))).passkey, 201))
  .openapi(removeRoute, async (c) => {
    if ((await removePasskey(c, c.req.valid("param").id)) === null) throw notFound("No such passkey in your account.");
    return c.json({ success: true as const }, 200);
  })
  .openapi(signInOptionsRoute, async (c) => c.json(await passkeySignInOptions(c), 200))
  .openapi(signInRoute, async (c) => c.json(orThrow(await signInWithPasskey(c, c.req.valid("json"))).reply, 200));
