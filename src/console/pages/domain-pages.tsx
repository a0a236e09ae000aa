import { type Context, Hono } from "hono";
import { z } from "zod";
import { DOMAIN_BADGES } from "../../domains/states";
import type { AppEnv } from "../../http/context";
import { ERROR_STATUS } from "../../http/errors";
import { callerOf } from "../actions/caller";
import { addCustomDomain, ownedDomain as ownedDomainOf, removeCustomDomain, verifyNow } from "../actions/domains";
import { ownedApp, renderDomains } from "./app-tab-pages";
import { Csrf } from "./components";
import { setFlash } from "./flash";
import { readForm } from "./forms";
import { Layout, type Viewer, loadViewer, render } from "./layout";

type Page = Context<AppEnv>;

const HostnameForm = z.object({ hostname: z.string().max(1024).default("") });

const domainsPath = (appId: string) => `/console/apps/${appId}/domains`;

async function ownedDomain(c: Page) {
  const app = await ownedApp(c);
  return { app, domain: await ownedDomainOf(callerOf(c), app, c.req.param("hostname")!) };
}

/** The confirmation page of Remove, naming the hostname and what happens. */
function RemoveDomainPage(props: { viewer: Viewer; appId: string; appName: string; hostname: string }) {
  const base = `/console/apps/${props.appId}/domains/${encodeURIComponent(props.hostname)}`;
  return (
    <Layout title={`Remove ${props.hostname}`} viewer={props.viewer} section="apps">
      <div class="card narrow">
        <h1>Remove {props.hostname}?</h1>
        <p>
          <code>{props.hostname}</code> stops answering for <strong>{props.appName}</strong> at once. The app itself is not affected
          and keeps answering at its own address.
        </p>
        <form method="post" action={`${base}/remove`} class="row-actions">
          <Csrf token={props.viewer.csrfToken} />
          <a class="button secondary" href={domainsPath(props.appId)}>
            Cancel
          </a>
          <button type="submit" class="danger">
            Remove {props.hostname}
          </button>
        </form>
      </div>
    </Layout>
  );
}

/**
 * The Domains tab's forms: add (errors under the field, the page shown again),
 * Verify now, and Remove with its confirmation. Plain forms answered with a redirect and a flash.
 */
export const domainPages = new Hono<AppEnv>()
  .post("/:id/domains", async (c) => {
    const app = await ownedApp(c);
    const form = await readForm(c, HostnameForm);
    const hostname = form.ok ? form.data.hostname : (form.values.hostname ?? "");
    const added = await addCustomDomain(callerOf(c), app, hostname);
    if (!added.ok) {
      return renderDomains(c, app, { hostname, error: added.message }, ERROR_STATUS[added.code] as 400 | 403 | 409);
    }
    const every = c.get("config").DOMAIN_RECHECK_SECONDS;
    await setFlash(c, { notice: `${added.row.hostname} added. Create the DNS record shown for it; it is checked every ${every} seconds.` });
    return c.redirect(domainsPath(app.id), 303);
  })
  .post("/:id/domains/:hostname/verify", async (c) => {
    const { app, domain } = await ownedDomain(c);
    const verified = await verifyNow(callerOf(c), app, domain);
    if (!verified.ok) {
      await setFlash(c, { error: `${domain.hostname}: ${verified.message}` });
      return c.redirect(domainsPath(app.id), 303);
    }
    const checked = verified.row;
    const badge = DOMAIN_BADGES[checked.status];
    await setFlash(
      c,
      checked.status === "error"
        ? { error: `${checked.hostname}: the check failed. The reason is shown under the domain.` }
        : { notice: `${checked.hostname} checked: ${badge}.` },
    );
    return c.redirect(domainsPath(app.id), 303);
  })
  .get("/:id/domains/:hostname/remove", async (c) => {
    const { app, domain } = await ownedDomain(c);
    return render(c, <RemoveDomainPage viewer={await loadViewer(c)} appId={app.id} appName={app.name} hostname={domain.hostname} />);
  })
  .post("/:id/domains/:hostname/remove", async (c) => {
    const { app, domain } = await ownedDomain(c);
    await removeCustomDomain(callerOf(c), domain);
    await setFlash(c, { notice: `${domain.hostname} removed. It no longer answers for this app.` });
    return c.redirect(domainsPath(app.id), 303);
  });
