import { createRoute, z } from "@hono/zod-openapi";
import { notFound } from "../../http/errors";
import { TokenName, createToken, listTokens, revokeToken } from "../actions/tokens";
import { NewToken, Success, TokenView } from "./account-schemas";
import { SIGNED_IN_REPLIES, consoleRouter, errorReply, jsonBody, jsonBodyFirst, jsonReply, pathParam } from "./openapi";

/** API tokens under `/console/api/tokens`: list, create (the secret in the 201 only), revoke. */

const tags = ["Tokens"];

const listRoute = createRoute({
  method: "get",
  path: "/",
  operationId: "listTokens",
  tags,
  summary: "List the account's API tokens",
  responses: { 200: jsonReply(z.object({ tokens: z.array(TokenView) }), "The tokens, newest first; never their secrets."), ...SIGNED_IN_REPLIES },
});

const createTokenRoute = createRoute({
  method: "post",
  path: "/",
  operationId: "createToken",
  tags,
  summary: "Create an API token",
  description: "A token lets a script export the account's databases through the public API. Its secret is in this reply only.",
  middleware: [jsonBodyFirst] as const,
  request: { body: jsonBody(TokenName, "The token's name.") },
  responses: { 201: jsonReply(NewToken, "Created, with its secret."), 400: errorReply("The name is missing or too long.", ["INVALID_REQUEST"]), ...SIGNED_IN_REPLIES },
});

const revokeRoute = createRoute({
  method: "delete",
  path: "/{id}",
  operationId: "revokeToken",
  tags,
  summary: "Revoke an API token",
  description: "At once: the next call with it is refused.",
  request: { params: z.object({ id: pathParam("id", "The token's id.") }) },
  responses: { 200: jsonReply(Success, "Revoked."), 404: errorReply("No such token in the account.", ["NOT_FOUND"]), ...SIGNED_IN_REPLIES },
});

export const tokenRoutes = consoleRouter()
  .openapi(listRoute, async (c) => c.json({ tokens: await listTokens(c) }, 200))
  .openapi(createTokenRoute, async (c) => c.json(await createToken(c, c.req.valid("json").name), 201))
  .openapi(revokeRoute, async (c) => {
    if ((await revokeToken(c, c.req.valid("param").id)) === null) throw notFound("No such token.");
    return c.json({ success: true as const }, 200);
  });
