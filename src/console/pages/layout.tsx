import type { Context } from "hono";
import { html } from "hono/html";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { accountEmail } from "../../auth/accounts";
import type { AppEnv } from "../../http/context";
import { ASSET_PATHS } from "./assets";
import { Csrf } from "./components";
import type { Flash } from "./flash";
import { pickLocale } from "./format";

/** Who is looking at a page: what the layout and forms need. */
export interface Viewer {
  email: string;
  csrfToken: string;
  locale: string;
}

/** The signed-in viewer; call after the session has been loaded. */
export async function loadViewer(c: Context<AppEnv>): Promise<Viewer> {
  const email = await accountEmail(c.env, c.get("accountId")!);
  return { email: email ?? "", csrfToken: c.get("session")?.csrfToken ?? "", locale: viewerLocale(c) };
}

/** The locale dates are formatted in, from the browser's `Accept-Language`. */
export const viewerLocale = (c: Context) => pickLocale(c.req.header("Accept-Language"));

/** The navigation entry a page belongs to (marked `aria-current`). */
export type Section = "databases" | "apps" | "billing" | "notifications" | "profile";

interface LayoutProps {
  title: string;
  viewer?: Viewer;
  section?: Section;
  flash?: Flash | null;
  narrow?: boolean;
  children: Child;
}

/** Every console page: top bar with navigation and sign-out, flash messages, the page itself. */
export function Layout(props: LayoutProps) {
  const nav = (href: string, label: string, section: Section) => (
    <a href={href} aria-current={props.section === section ? "page" : undefined}>
      {label}
    </a>
  );
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Console`}</title>
        <link rel="icon" href={ASSET_PATHS.icon} type="image/svg+xml" />
        <link rel="stylesheet" href={ASSET_PATHS.css} />
        <script src={ASSET_PATHS.js} defer></script>
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="topbar">
          <div class="topbar-inner">
            <a class="brand" href="/console">
              Control <span>plane</span>
            </a>
            {props.viewer && (
              <>
                <nav class="nav" aria-label="Console">
                  {nav("/console/databases", "Databases", "databases")}
                  {nav("/console/apps", "Apps", "apps")}
                  {nav("/console/billing", "Billing", "billing")}
                  {nav("/console/notifications", "Notifications", "notifications")}
                  {nav("/console/profile", "Profile", "profile")}
                </nav>
                <div class="who">
                  <span>{props.viewer.email}</span>
                  <form method="post" action="/console/signout">
                    <Csrf token={props.viewer.csrfToken} />
                    <button type="submit" class="ghost">
                      Sign out
                    </button>
                  </form>
                </div>
              </>
            )}
          </div>
        </header>
        <main id="main" tabindex={-1} class={props.narrow ? "narrow" : undefined}>
          {!props.flash?.section && <FlashMessages flash={props.flash} />}
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** A flash's notice (green, polite) and error (red, announced at once). */
export function FlashMessages(props: { flash?: Flash | null }) {
  if (!props.flash) return null;
  return (
    <>
      {props.flash.notice && (
        <p class="notice" role="status">
          {props.flash.notice}
        </p>
      )}
      {props.flash.error && (
        <p class="alert" role="alert">
          {props.flash.error}
        </p>
      )}
    </>
  );
}

/** Sends a page as HTML with its doctype. */
export function render(c: Context<AppEnv>, page: Child, status: ContentfulStatusCode = 200) {
  return c.html(html`<!doctype html>${page}`, status);
}
