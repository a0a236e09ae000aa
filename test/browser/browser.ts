/**
 * Browser-test helpers: Debian's Chromium driven by playwright-core, screenshots under
 * test-output/browser (git-ignored), keyboard-focus probes and a CSP-violation watch.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContextOptions, type Page, chromium } from "playwright-core";
import { ROOT } from "../../scripts/lib/dev-server";
import { TEST_PASSWORD, noteAccount } from "../e2e/harness";

export const SCREENSHOTS = join(ROOT, "test-output", "browser");

/** Chromium as `.ci/run` installs it; CHROMIUM_PATH points elsewhere. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

/** A page in a fresh context (own cookies) that records every CSP violation the console causes. */
export async function openPage(browser: Browser, options: BrowserContextOptions = {}) {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1200, height: 860 }, ...options });
  const page = await context.newPage();
  const cspViolations: string[] = [];
  page.on("console", (msg) => {
    if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
  });
  return { context, page, cspViolations };
}

/** Saves a full-page screenshot as test-output/browser/<name>.png. */
/** Signs up through the console's form (password "correct horse battery") and waits for the databases page. */
export async function signUpInConsole(page: Page, base: string, email: string): Promise<void> {
  await page.goto(`${base}/console/signup`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(TEST_PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.waitForURL(/\/console\/databases$/);
  noteAccount(email);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** What has keyboard focus: its tag, accessible-ish name, and whether the focus ring shows. */
export interface FocusProbe {
  tag: string;
  name: string;
  ringVisible: boolean;
}

/**
 * Runs in the page (as text: the Worker's tsconfig also sees this file and has no DOM types).
 * The ring counts as visible when the element matches :focus-visible with an outline of 2px+.
 */
const FOCUS_PROBE = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body) return { tag: "body", name: "", ringVisible: false };
  const style = getComputedStyle(el);
  const label = el.id ? document.querySelector('label[for="' + el.id + '"]')?.textContent : null;
  const name = (el.getAttribute("aria-label") ?? label ?? el.textContent ?? "").trim().replace(/\\s+/g, " ");
  const ringVisible = el.matches(":focus-visible") && style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2;
  return { tag: el.tagName.toLowerCase(), name, ringVisible };
})()`;

export function probeFocus(page: Page): Promise<FocusProbe> {
  return page.evaluate(FOCUS_PROBE) as Promise<FocusProbe>;
}

/** Presses Tab until `wanted` has focus; returns every stop on the way (fails after `max`). */
export async function tabTo(page: Page, wanted: (f: FocusProbe) => boolean, max = 40): Promise<FocusProbe[]> {
  const stops: FocusProbe[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    const focus = await probeFocus(page);
    stops.push(focus);
    if (wanted(focus)) return stops;
  }
  throw new Error(`focus never reached the target; stops: ${stops.map((s) => `${s.tag}:${s.name}`).join(" | ")}`);
}

/** SHA-256 (lowercase hex) of a file. */
export function sha256File(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}
