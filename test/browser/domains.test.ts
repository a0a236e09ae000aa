/**
 * Custom domains in Chromium (issue 15): a real `wrangler dev`, dockerd and the DoH stand-in (re-check
 * every 3 s). Add a domain to a running Starter app, see `Pending DNS` with its countdown, `Verify now`
 * gives `Error` with its reason, the record appears and the console script redraws the badge to
 * `Active` without a reload, then Remove behind its confirmation. Screenshots in test-output/browser.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppsStack, creditAccount, httpdApp, repository, startAppsStack } from "../e2e/apps-harness";
import { launchChromium, openPage, screenshot, signUpInConsole } from "./browser";

let stack: AppsStack;
let browser: Browser;
let page: Page;
let cspViolations: string[];
const run = Date.now().toString(36);
const subdomain = `store-${run}`;
const hostname = `shop-${run}.example.test`;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startAppsStack({ DOMAIN_RECHECK_SECONDS: "3" }), launchChromium()]);
  ({ page, cspViolations } = await openPage(browser, { locale: "en-GB", timezoneId: "Europe/Paris" }));
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

const badge = () => page.locator(`[data-domain="${hostname}"] [data-domain-status]`);

describe("custom domains in Chromium", () => {
  it("signs up, creates a Starter app and deploys it", async () => {
    await signUpInConsole(page, stack.worker.url, `domains-browser-${run}@example.com`);
    // The operator credits the wallet, so the first deploy below can be charged.
    await creditAccount(stack.worker.url, `domains-browser-${run}@example.com`, 10_000);

    const repo = await repository(stack, `store-${run}`, httpdApp("<h1>Store</h1>\n"));
    await page.goto(`${stack.worker.url}/console/apps/new`);
    await page.getByLabel("Name").fill("store");
    await page.getByLabel("Repository").fill(repo);
    await page.getByLabel("Subdomain").fill(subdomain);
    await page.getByRole("radio", { name: /^Starter/ }).check();
    await page.getByRole("button", { name: "Create app" }).click();
    await page.waitForURL(/\/console\/apps\/[0-9a-f-]{36}$/);
    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    await page.locator("[data-app-status=running]").waitFor({ timeout: 90_000 });
    // Custom domains are on the app's Domains tab.
    await page.getByRole("navigation", { name: "App" }).getByRole("link", { name: "Domains" }).click();
    await page.waitForURL(/\/console\/apps\/[0-9a-f-]{36}\/domains$/);
  });

  it("adds a domain: Pending DNS with the record to create, its copy button and a countdown", async () => {
    const section = page.getByRole("region", { name: "Custom domains" });
    await section.getByLabel("Hostname").fill("https://nope");
    await section.getByRole("button", { name: "Add domain" }).click();
    await expect.poll(() => page.locator("#f-hostname-error").textContent()).toBe("Enter a hostname only, such as shop.example.com: no scheme, path, port or spaces.");

    await page.getByLabel("Hostname").fill(hostname);
    await page.getByRole("button", { name: "Add domain" }).click();
    await page.getByText(`${hostname} added.`).waitFor();
    expect(await badge().textContent()).toBe("Pending DNS");
    expect(await page.getByLabel(`DNS record target for ${hostname}`).inputValue()).toBe(`${subdomain}.localhost`);
    expect(await page.locator(`[data-domain="${hostname}"] button[data-copy^="dns-target-"]`).isVisible()).toBe(true);
    // Beside it, the TXT record that proves the claim through the shared target, each part with its copy button.
    expect(await page.getByLabel(`TXT record name for ${hostname}`).inputValue()).toBe(`_cp-challenge.${hostname}`);
    expect(await page.getByLabel(`TXT record value for ${hostname}`).inputValue()).toMatch(/^[0-9a-f]{32}$/);
    for (const part of ["name", "value"]) expect(await page.locator(`[data-domain="${hostname}"] button[data-copy^="dns-txt-${part}-"]`).isVisible()).toBe(true);
    await expect.poll(() => page.locator(`[data-domain="${hostname}"] [data-countdown]`).textContent()).toMatch(/^(in \d+ s|checking now)$/);
    expect(await page.locator("[data-domains-refresh]").isVisible()).toBe(false);
    await screenshot(page, "domains-01-pending");
  });

  it("Verify now before the record exists shows Error with the reason under the domain", async () => {
    await page.locator(`[data-domain="${hostname}"]`).getByRole("button", { name: "Verify now" }).click();
    await expect.poll(() => badge().textContent()).toBe("Error");
    expect(await page.locator(`[data-domain="${hostname}"] .domain-reason`).textContent()).toBe(
      `${hostname} has no CNAME record; expected a CNAME to ${subdomain}.localhost`,
    );
    await screenshot(page, "domains-02-error");
  });

  it("the record appears: the badge changes to Active on its own, without a reload", async () => {
    stack.dns.set(hostname, [{ type: "CNAME", data: `${subdomain}.localhost` }]);
    await expect.poll(() => badge().textContent(), { timeout: 60_000, interval: 500 }).toBe("Active");
    // Said once through the section's status line, for screen readers.
    await expect.poll(() => page.locator("[data-domains-announce]").textContent()).toBe(`${hostname}: Active`);
    expect(await page.locator(`[data-domain="${hostname}"]`).getByText("HTTP only").count()).toBe(1);
    await screenshot(page, "domains-03-active");
  });

  it("removes the domain after the confirmation", async () => {
    await page.locator(`[data-domain="${hostname}"]`).getByRole("link", { name: "Remove" }).click();
    await page.getByRole("heading", { name: `Remove ${hostname}?` }).waitFor();
    await screenshot(page, "domains-04-confirm");
    await page.getByRole("button", { name: `Remove ${hostname}` }).click();
    await page.getByText(`${hostname} removed. It no longer answers for this app.`).waitFor();
    expect(await page.locator(`[data-domain="${hostname}"]`).count()).toBe(0);
    await screenshot(page, "domains-05-removed");
    expect(cspViolations).toEqual([]);
  });
});
