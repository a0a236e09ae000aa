/**
 * Deploy history and rollback in Chromium against a real `wrangler dev`, dockerd and the dev forge:
 * two deploys of two commits, the history naming each commit, then Rollback on the older one and
 * the app serving its page again. Screenshots land in test-output/browser.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitFiles } from "../../scripts/dev-forge";
import { type AppsStack, creditAccount, httpdApp, repository, startAppsStack } from "../e2e/apps-harness";
import { launchChromium, openPage, screenshot, signUpInConsole } from "./browser";

let stack: AppsStack;
let browser: Browser;
let page: Page;
let cspViolations: string[];
const run = Date.now().toString(36);

beforeAll(async () => {
  [stack, browser] = await Promise.all([startAppsStack(), launchChromium()]);
  ({ page, cspViolations } = await openPage(browser, { locale: "en-GB", timezoneId: "Europe/Paris" }));
});

afterAll(async () => {
  // Stopping the stack removes the apps' containers, networks and images (test/e2e/harness.ts).
  await browser?.close();
  await stack?.stop();
});

const deployRows = () => page.locator("tbody tr[data-deploy-id]");

describe("deploy history and rollback in Chromium", () => {
  it("shows each deploy's commit and rolls back to the earlier one, which serves its page again", async () => {
    const email = `rollback-browser-${run}@example.com`;
    await signUpInConsole(page, stack.worker.url, email);
    await creditAccount(stack.worker.url, email, 10_000);

    const name = `history-${run}`;
    const repo = await repository(stack, name, httpdApp(`<h1>Version one ${run}</h1>\n`));
    await commitFiles(stack.forgeRoot, "acme", name, {}, { message: "Version one of the page" });
    await page.goto(`${stack.worker.url}/console/apps/new`);
    await page.getByLabel("Name").fill("history");
    await page.getByLabel("Repository").fill(repo);
    await page.getByLabel("Subdomain").fill(name);
    await page.getByRole("button", { name: "Create app" }).click();
    await page.waitForURL(/\/console\/apps\/[0-9a-f-]{36}$/);
    const appUrl = page.url();

    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    await page.getByRole("button", { name: "Redeploy" }).waitFor({ timeout: 120_000 });
    await page.locator("[data-app-status=running]").waitFor();

    await commitFiles(stack.forgeRoot, "acme", name, { "www/index.html": `<h1>Version two ${run}</h1>\n` }, { message: "Version two of the page" });
    await page.getByRole("button", { name: "Redeploy" }).click();
    await page.getByRole("button", { name: "Deploying…" }).waitFor();
    await page.getByRole("button", { name: "Redeploy" }).waitFor({ timeout: 120_000 });
    await page.goto(`${appUrl}/deploys`);
    await expect.poll(() => deployRows().count()).toBe(2);
    const [newer, older] = [deployRows().nth(0), deployRows().nth(1)];
    await expect.poll(() => newer.locator("[data-deploy-status]").getAttribute("data-deploy-status")).toBe("live");
    expect(await newer.locator("[data-commit]").textContent()).toContain("Version two of the page");
    expect(await older.locator("[data-commit]").textContent()).toContain("Version one of the page");
    expect(await newer.getByRole("button", { name: /^Roll back/ }).count()).toBe(0);
    await screenshot(page, "rollback-01-history");
    // The app's page carries Last-Modified (busybox httpd gives the file's time, the commit's), so
    // Chromium may keep it a few seconds by heuristic freshness: each visit names its own query.
    await page.goto(`http://${name}.localhost:${stack.worker.port}/?visit=before-rollback`);
    await page.getByRole("heading", { name: `Version two ${run}` }).waitFor();

    await page.goto(`${appUrl}/deploys`);
    const olderId = (await deployRows().nth(1).getAttribute("data-deploy-id"))!;
    await page.getByRole("button", { name: `Roll back to deploy ${olderId.slice(0, 8)}` }).click();
    await page.waitForURL(appUrl);
    await page.getByText(`Rolling back to deploy ${olderId.slice(0, 8)}: no rebuild. Its log is under Deploys.`).waitFor();
    const rollbackRow = page.locator('tbody tr[data-deploy-kind="rollback"]');
    await rollbackRow.waitFor();
    expect(await rollbackRow.textContent()).toContain(`rollback of ${olderId.slice(0, 8)}`);
    expect(await rollbackRow.locator("[data-commit]").textContent()).toContain("Version one of the page");
    await screenshot(page, "rollback-02-pressed");
    // The console script follows the rollback like a deploy and redraws once it is live.
    await expect.poll(async () => {
      await page.reload();
      return page.locator('tbody tr[data-deploy-kind="rollback"] [data-deploy-status]').getAttribute("data-deploy-status");
    }, { timeout: 60_000 }).toBe("live");
    await screenshot(page, "rollback-03-live");

    await page.goto(`http://${name}.localhost:${stack.worker.port}/?visit=after-rollback`);
    await page.getByRole("heading", { name: `Version one ${run}` }).waitFor();
    await screenshot(page, "rollback-04-served");
    expect(cspViolations).toEqual([]);
  }, 300_000);
});
