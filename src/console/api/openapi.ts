import { type Hook, OpenAPIHono, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../http/context";
import { type ErrorCode, invalid } from "../../http/errors";
import { describeIssues } from "../../http/validate";

/**
 * The console's JSON routes as zod-openapi operations, and their OpenAPI document at
 * `GET /console/api/openapi.json`. Each resource's router is a `consoleRouter()` holding one
 * `createRoute` per operation; mounted on the console API (src/app.ts), its operations join the
 * document under their full path.
 */

const DOCUMENT_INFO = {
  openapi: "3.1.0",
  info: {
    title: "Console API",
    version: "1.0.0",
    description: [
      "The JSON routes the console's pages and scripts call: apps, their deploys, variables, domains, logs and metrics, and the account.",
      "A signed-in browser session (the session cookie) is the credential; every request that changes something also carries the session's CSRF token in `X-CSRF-Token` (or comes from the console's own origin).",
      "Every JSON error reply is `{success: false, error, code}`; branch on `code`, which never changes with wording. A 400 `INVALID_REQUEST` names the field first (`name: ...`).",
    ].join("\n\n"),
  },
  security: [{ session: [] }],
};

/** A request the schemas refuse is 400 INVALID_REQUEST naming its first bad field, as readJson (src/http/validate.ts) answers. */
export const consoleHook: Hook<any, AppEnv, any, any> = (result) => {
  if (!result.success) throw invalid(describeIssues(result.error));
};

/** A router of console JSON routes: `.openapi(createRoute({...}), handler)` per operation. */
export function consoleRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: consoleHook });
}

// zod-openapi's own test of a JSON media type: a body under any other is refused before its schema is read.
const JSON_TYPE = /^application\/([a-z.-]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;

/**
 * Middleware of an operation with a JSON body, ahead of its validator: a missing or malformed body
 * is 400 INVALID_REQUEST "The body must be a JSON object.", as readJson answers (the validator
 * alone would say "Malformed JSON in request body" or 415). As readJson always did, the body is
 * read as JSON whatever its Content-Type (curl's `-d` sends form encoding, fetch's string body
 * `text/plain`): a JSON body under another type is handed on to the validator as JSON.
 */
export const jsonBodyFirst: MiddlewareHandler<AppEnv> = async function jsonBodyFirst(c, next) {
  // Bytes, not text(): workerd warns when a body under a non-text type is read as text.
  const text = await c.req.arrayBuffer().then((bytes) => new TextDecoder().decode(bytes), () => null);
  let parsed = false;
  try {
    parsed = text !== null && (JSON.parse(text), true);
  } catch {
    parsed = false;
  }
  if (!parsed) throw invalid("The body must be a JSON object.");
  const type = c.req.header("Content-Type");
  if (type === undefined || !JSON_TYPE.test(type)) {
    const headers = new Headers(c.req.raw.headers);
    headers.set("Content-Type", "application/json");
    c.req.raw = new Request(c.req.raw.url, { method: c.req.raw.method, headers, body: text });
  }
  await next();
};

/** An operation's required JSON body. */
export function jsonBody<S extends z.ZodType>(schema: S, description: string) {
  return { required: true as const, description, content: { "application/json": { schema } } };
}

/** A JSON reply. */
export function jsonReply<S extends z.ZodType>(schema: S, description: string, headers?: Record<string, { description: string; schema: { type: "string" } }>) {
  return { description, ...(headers ? { headers } : {}), content: { "application/json": { schema } } };
}

/** The error envelope, its `code` limited to the codes one reply can carry. */
export function errorReply<C extends ErrorCode>(description: string, codes: readonly [C, ...C[]]) {
  const schema = z.object({
    success: z.literal(false),
    error: z.string().openapi({ description: "A sentence for a person; its wording may change." }),
    code: z.enum(codes).openapi({ description: "Stable label; branch on this." }),
  });
  return jsonReply(schema, description);
}

/** A path parameter. */
export const pathParam = (name: string, description: string) => z.string().openapi({ param: { name, in: "path" }, description });

/** The 401 and 403 every signed-in operation may answer, and its 404 for an app of another account. */
export const SIGNED_IN_REPLIES = {
  401: errorReply("No signed-in session.", ["UNAUTHORIZED"]),
  403: errorReply("A change without the session's CSRF token, or from another site.", ["CSRF_REJECTED"]),
};

/** `Cache-Control: no-store`, on replies no cache may keep. */
export const NO_STORE = { "Cache-Control": { description: "`no-store`.", schema: { type: "string" as const } } };

/**
 * Registers `GET /openapi.json` on the console API: the document of every operation mounted on it
 * (built on the first request, once every router is mounted), its paths under /console/api.
 */
export function serveConsoleDocument(api: OpenAPIHono<AppEnv>, prefix = "/console/api"): void {
  api.openAPIRegistry.registerComponent("securitySchemes", "session", {
    type: "apiKey",
    in: "cookie",
    name: "session",
    description: "The console's session cookie, set by signing up or in (named `__Host-session` over https). An operation open to anyone says `security: []`.",
  });
  let document: ReturnType<typeof api.getOpenAPI31Document> | undefined;
  api.get("/openapi.json", (c) => {
    if (!document) {
      const built = api.getOpenAPI31Document(DOCUMENT_INFO);
      document = { ...built, paths: Object.fromEntries(Object.entries(built.paths ?? {}).map(([path, item]) => [prefix + path, item])) };
    }
    return c.json(document);
  });
}
