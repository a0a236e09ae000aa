/**
 * The app's tabs in Chromium against a real `wrangler dev`: Overview, Metrics, Logs, Deploys,
 * Environment, Domains and Settings are plain links in the app's tab bar, each answering 200 at its
 * own URL with its own section, the current one marked aria-current="page", and axe-core finds
 * nothing on any of them. No container is needed: the app is never deployed. Screenshots land in
 * test-output/browser.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Worker, startWorker } from "../e2e/harness";
import { axeViolations } from "./axe";
import { launchChromium, openPage, screenshot, signUpInConsole } from "./browser";

let worker: Worker;
let browser: Browser;
let page: Page;
let cspViolations: string[];
const run = Date.now().toString(36);

beforeAll(async () => {
  [worker, browser] = await Promise.all([startWorker(), launchChromium()]);
  ({ page, cspViolations } = await openPage(browser, { locale: "en-GB" }));
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

/** Each tab, its path under the app's URL, and a heading only that tab shows. */
const TABS = [
  ["Overview", "", "Controls"],
  ["Metrics", "/metrics", "Requests by status"],
  ["Logs", "/logs", "Logs"],
  ["Deploys", "/deploys", "Deploys"],
  ["Environment", "/environment", "Environment"],
  ["Domains", "/domains", "Custom domains"],
  ["Settings", "/settings", "Settings"],
] as const;

describe("the app's tabs in Chromium", () => {
  it("opens every tab from the tab bar: 200, its section, aria-current on it alone, axe clean", async () => {
    await signUpInConsole(page, worker.url, `tabs-${run}@example.com`);
    await page.goto(`${worker.url}/console/apps/new`);
    await page.getByLabel("Name").fill("tabbed");
    await page.getByLabel("Repository").fill("https://git.example.com/acme/tabbed");
    await page.getByLabel("Subdomain").fill(`tabbed-${run}`);
    await page.getByRole("button", { name: "Create app" }).click();
    await page.waitForURL(/\/console\/apps\/[0-9a-f-]{36}$/);
    const appUrl = page.url();
    const tabs = page.getByRole("navigation", { name: "App" });
    expect(await tabs.getByRole("link").allTextContents()).toEqual(TABS.map(([label]) => label));

    // From the last tab back to the first, so every link is followed from another tab.
    for (const [label, path, heading] of [...TABS.slice(1), TABS[0]]) {
      const answered = page.waitForResponse((res) => res.url() === `${appUrl}${path}` && res.request().isNavigationRequest());
      await tabs.getByRole("link", { name: label, exact: true }).click();
      expect((await answered).status()).toBe(200);
      await page.waitForURL(`${appUrl}${path}`);
      expect(await tabs.locator('[aria-current="page"]').allTextContents()).toEqual([label]);
      await page.getByRole("heading", { name: heading, exact: true, level: 2 }).waitFor();
      expect(await page.getByRole("heading", { name: "tabbed", level: 1 }).count()).toBe(1);
      await screenshot(page, `tabs-${label.toLowerCase()}`);
      expect(await axeViolations(page), label).toEqual([]);
    }
    expect(cspViolations).toEqual([]);
  }, 120_000);
});
