import { createRoute, z } from "@hono/zod-openapi";
import { ApiError } from "../../http/errors";
import { ownedApp } from "../actions/apps";
import { callerOf } from "../actions/caller";
import { addCustomDomain, listDomains, ownedDomain, removeCustomDomain, verifyNow } from "../actions/domains";
import { orThrow } from "../actions/outcome";
import { AppIdParams, SuccessJson } from "./app-schemas";
import { SIGNED_IN_REPLIES, consoleRouter, errorReply, jsonBody, jsonBodyFirst, jsonReply, pathParam } from "./openapi";
import { appFirst, requestedApp } from "./owned-app";

/**
 * The console's JSON routes for custom domains (docs/domains.md), under
 * `/console/api/apps/{id}/domains`. What they do is in src/console/actions/domains.ts, shared with
 * the Domains tab; refusals keep their own codes.
 */

export const AddDomainRequest = z.object({
  hostname: z.string({ message: "Enter a hostname such as shop.example.com." }).max(1024, { message: "A hostname is at most 253 characters long." }),
});

const TAGS = ["Custom domains"];
const DomainParams = z.object({ id: pathParam("id", "The app's id."), hostname: pathParam("hostname", "The custom domain's hostname.") });
const NOT_FOUND = { 404: errorReply("No such app in your account, or no such domain on it.", ["NOT_FOUND"]) };

const DomainJson = z
  .object({
    hostname: z.string(),
    status: z.enum(["Pending DNS", "Verifying…", "Active", "Error"]),
    reason: z.string().nullable().openapi({ description: "Why the last check failed (status Error)." }),
    dns_record: z.object({ type: z.enum(["CNAME", "A", "AAAA"]), name: z.string(), target: z.string() }).openapi({ description: "The record to create at the DNS provider." }),
    verification: z.object({ type: z.literal("TXT"), name: z.string(), value: z.string() }).openapi({ description: "The TXT record that proves the claim when DNS points to the shared target." }),
    last_checked_at: z.string().nullable().openapi({ format: "date-time" }),
    next_check_at: z.string().nullable().openapi({ format: "date-time" }),
    https: z.boolean(),
    created_at: z.string().openapi({ format: "date-time" }),
  })
  .openapi("CustomDomain");

const listRoute = createRoute({
  method: "get",
  path: "/{id}/domains",
  operationId: "listDomains",
  tags: TAGS,
  summary: "The app's custom domains",
  request: { params: AppIdParams },
  responses: { 200: jsonReply(z.object({ domains: z.array(DomainJson) }), "Each domain with its DNS record and state."), ...NOT_FOUND, ...SIGNED_IN_REPLIES },
});

const addRoute = createRoute({
  method: "post",
  path: "/{id}/domains",
  operationId: "addDomain",
  tags: TAGS,
  summary: "Add a custom domain",
  middleware: [appFirst, jsonBodyFirst] as const,
  request: { params: AppIdParams, body: jsonBody(AddDomainRequest, "The hostname.") },
  responses: {
    201: jsonReply(DomainJson, "Added, Pending DNS: create the record shown."),
    400: errorReply("Not a hostname that can be added.", ["INVALID_REQUEST"]),
    ...SIGNED_IN_REPLIES,
    403: errorReply("The app's plan has no custom domains (or no CSRF token).", ["PLAN_REQUIRED", "CSRF_REJECTED"]),
    ...NOT_FOUND,
    409: errorReply("The app has its most domains, is not running, or the hostname is taken.", ["DOMAIN_LIMIT", "APP_NOT_RUNNING", "DOMAIN_TAKEN"]),
  },
});

const verifyRoute = createRoute({
  method: "post",
  path: "/{id}/domains/{hostname}/verify",
  operationId: "verifyDomain",
  tags: TAGS,
  summary: "Verify now: check the domain's DNS at once",
  request: { params: DomainParams },
  responses: { 200: jsonReply(DomainJson, "The domain after the check."), ...NOT_FOUND, 429: errorReply("Pressed too often; `Retry-After` says when to try again.", ["RATE_LIMIT_EXCEEDED"]), ...SIGNED_IN_REPLIES },
});

const removeRoute = createRoute({
  method: "delete",
  path: "/{id}/domains/{hostname}",
  operationId: "removeDomain",
  tags: TAGS,
  summary: "Remove a custom domain",
  request: { params: DomainParams },
  responses: { 200: jsonReply(SuccessJson, "Removed: it no longer answers for the app."), ...NOT_FOUND, ...SIGNED_IN_REPLIES },
});

export const domainRoutes = consoleRouter()
  .openapi(listRoute, async (c) => {
    const caller = callerOf(c);
    return c.json({ domains: await listDomains(caller, await ownedApp(caller, c.req.valid("param").id)) }, 200);
  })
  .openapi(addRoute, async (c) => {
    const added = orThrow(await addCustomDomain(callerOf(c), await requestedApp(c), c.req.valid("json").hostname));
    return c.json(added.domain, 201);
  })
  .openapi(verifyRoute, async (c) => {
    const caller = callerOf(c);
    const { id, hostname } = c.req.valid("param");
    const app = await ownedApp(caller, id);
    const checked = await verifyNow(caller, app, await ownedDomain(caller, app, hostname));
    if (!checked.ok) {
      const headers = "retryAfterSeconds" in checked ? { "Retry-After": String(checked.retryAfterSeconds) } : undefined;
      throw new ApiError(checked.code, checked.message, { headers });
    }
    return c.json(checked.domain, 200);
  })
  .openapi(removeRoute, async (c) => {
    const caller = callerOf(c);
    const { id, hostname } = c.req.valid("param");
    await removeCustomDomain(caller, await ownedDomain(caller, await ownedApp(caller, id), hostname));
    return c.json({ success: true as const }, 200);
  });
