import { Hono } from "hono";
import type { AppEnv } from "../../../http/context";
import { CLIENT_SCRIPT } from "./client-bundle";
import { PASSKEY_SCRIPT } from "./passkeys-bundle";
import { STYLES } from "./styles";

/** A small mark for the tab bar. */
const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#111827"/><path d="M9 10h14v4H9zm0 8h14v4H9z" fill="#93b4ff"/></svg>`;

/** The paths pages link to. */
export const ASSET_PATHS = {
  css: "/console/assets/console.css",
  js: "/console/assets/console.js",
  icon: "/console/assets/icon.svg",
} as const;

/** The passkey script (@simplewebauthn/browser bundled, see scripts/build-passkey-script.ts): only pages with passkeys load it. */
export const PASSKEY_SCRIPT_PATH = "/console/assets/passkeys.js";

const asset = (body: string, type: string) => () =>
  new Response(body, {
    headers: { "Content-Type": type, "Cache-Control": "public, max-age=300", "X-Content-Type-Options": "nosniff" },
  });

/** Static files of the console, served by the Worker itself (no CDN, no inline code). */
export const assetRoutes = new Hono<AppEnv>()
  .get("/console.css", asset(STYLES, "text/css; charset=utf-8"))
  .get("/console.js", asset(CLIENT_SCRIPT, "text/javascript; charset=utf-8"))
  .get("/passkeys.js", asset(PASSKEY_SCRIPT, "text/javascript; charset=utf-8"))
  .get("/icon.svg", asset(ICON, "image/svg+xml"));
