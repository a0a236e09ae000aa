/**
 * Every core action of the console with JavaScript switched off in Chromium: plain forms and
 * links, the server doing all the work. Screenshots in test-output/browser (prefix `no-js-`).
 */
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Worker, startWorker } from "../e2e/harness";
import { SCREENSHOTS, launchChromium, openPage, screenshot, sha256File, signUpInConsole } from "./browser";

let worker: Worker;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [worker, browser] = await Promise.all([startWorker(), launchChromium()]);
  ({ page } = await openPage(browser, { javaScriptEnabled: false, locale: "de-DE" }));
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

describe("console without JavaScript", () => {
  it("signs up, creates and revokes a token", async () => {
    await signUpInConsole(page, worker.url, `no-js-${Date.now()}@example.com`);

    await page.getByRole("link", { name: "Profile" }).click();
    await page.getByLabel("Token name").fill("nightly");
    await page.getByRole("button", { name: "Create token" }).click();
    expect(await page.getByLabel("Token secret").inputValue()).toMatch(/^dbx_/);
    // The copy button needs the script; without it the field is there to select by hand.
    expect(await page.getByRole("button", { name: "Copy" }).count()).toBe(0);
    // Server-rendered dates: the browser's language, in UTC, until a script localises them.
    expect(await page.locator("tbody time").first().textContent()).toMatch(/^\d\d\.\d\d\.\d{4}, \d\d:\d\d UTC$/);
    await screenshot(page, "no-js-01-token-created");

    await page.getByRole("link", { name: "Revoke nightly" }).click();
    await page.getByRole("button", { name: "Revoke token" }).click();
    await page.getByText("Token “nightly” revoked.").waitFor();
  });

  it("creates a database, runs SQL, exports it and downloads the archive", async () => {
    await page.getByRole("link", { name: "Databases" }).click();
    await page.getByLabel("Database name").fill("plain");
    await page.getByRole("button", { name: "Create database" }).click();
    await page.waitForURL(/\/console\/databases\/[0-9a-f-]{36}$/);
    const databaseId = page.url().split("/").pop()!;
    await page.getByLabel("SQL", { exact: true }).fill("CREATE TABLE t (x); INSERT INTO t VALUES (1), (2);");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByText("Statement 2: 2 rows written.").waitFor();

    await page.getByRole("button", { name: "Start export" }).click();
    await page.getByText("Export started.").waitFor();
    await screenshot(page, "no-js-02-export-started");
    // No live refresh without a script: the page offers a link, which a person follows.
    for (let i = 0; i < 30 && (await page.locator("[data-status=ready]").count()) === 0; i++) {
      const refresh = page.getByRole("link", { name: "Refresh" });
      if ((await refresh.count()) > 0) await refresh.click();
      else await page.reload();
      await page.waitForTimeout(500);
    }
    await page.locator("[data-status=ready]").waitFor();

    const sha = await page.locator("[data-sha256]").getAttribute("data-sha256");
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download" }).click()]);
    const saved = join(SCREENSHOTS, `no-js-${databaseId}.sql.gz`);
    await download.saveAs(saved);
    expect(sha256File(saved)).toBe(sha);
    await screenshot(page, "no-js-03-export-ready");
  });

  it("deletes the database behind a confirmation naming it, then signs out", async () => {
    await page.getByRole("link", { name: "Delete database…" }).click();
    await page.getByRole("heading", { name: "Delete “plain”?" }).waitFor();
    await screenshot(page, "no-js-04-delete-confirm");
    await page.getByRole("button", { name: "Delete plain" }).click();
    await page.getByText("Database “plain” deleted.").waitFor();
    await page.getByText("No databases yet").waitFor();

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("You have signed out.").waitFor();
    await page.goto(`${worker.url}/console/databases`);
    await page.waitForURL(/\/console\/signin\?next=/);
  });
});
