import { type Context, Hono } from "hono";
import { z } from "zod";
import { getOwnedApp } from "../../apps/store";
import { addDomain, removeDomain, verifyDomain, verifyWait, verifyWaitMessage, viewAppDomains, viewOne } from "../../domains/service";
import { getDomain } from "../../domains/store";
import type { AppEnv } from "../../http/context";
import { ApiError, notFound } from "../../http/errors";
import { readJson } from "../../http/validate";

export const NO_SUCH_DOMAIN = "No custom domain with this hostname exists on this app.";

export const AddDomainRequest = z.object({
  hostname: z.string({ message: "Enter a hostname such as shop.example.com." }).max(1024, { message: "A hostname is at most 253 characters long." }),
});

const ownedApp = (c: Context<AppEnv>) => getOwnedApp(c.env, c.get("accountId")!, c.req.param("id")!);

async function ownedDomain(c: Context<AppEnv>) {
  const app = await ownedApp(c);
  const domain = await getDomain(c.env, app.id, c.req.param("hostname")!);
  if (!domain) throw notFound(NO_SUCH_DOMAIN);
  return { app, domain };
}

/**
 * The console's JSON routes for custom domains (issue 15), under `/console/api/apps/{id}/domains`.
 * Another account's app answers 404 like a missing one; refusals use their own codes.
 */
export const domainRoutes = new Hono<AppEnv>()
  .get("/:id/domains", async (c) => {
    const app = await ownedApp(c);
    return c.json({ domains: await viewAppDomains(c.env, app) });
  })
  .post("/:id/domains", async (c) => {
    const app = await ownedApp(c);
    const { hostname } = await readJson(c, AddDomainRequest);
    const { now, uuid } = c.get("deps");
    const added = await addDomain(c.env, { app, hostname, id: uuid(), now: now() });
    if (!added.ok) throw new ApiError(added.code, added.code === "INVALID_REQUEST" ? `hostname: ${added.message}` : added.message);
    return c.json(viewOne(c.env, app, added.domain), 201);
  })
  .post("/:id/domains/:hostname/verify", async (c) => {
    const { app, domain } = await ownedDomain(c);
    const wait = await verifyWait(c.env, { accountId: c.get("accountId")!, domainId: domain.id, now: c.get("deps").now() });
    if (wait > 0) throw new ApiError("RATE_LIMIT_EXCEEDED", verifyWaitMessage(wait), { headers: { "Retry-After": String(wait) } });
    return c.json(viewOne(c.env, app, await verifyDomain(c.env, domain)));
  })
  .delete("/:id/domains/:hostname", async (c) => {
    const { domain } = await ownedDomain(c);
    await removeDomain(c.env, domain);
    return c.json({ success: true });
  });
