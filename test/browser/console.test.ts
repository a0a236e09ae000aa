/**
 * The console in a real browser (Debian's Chromium) against a real `wrangler dev`: the whole
 * path a person takes, with the keyboard where the issue asks for it. Screenshots of each key
 * screen land in test-output/browser.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Worker, localD1, startWorker } from "../e2e/harness";
import { SCREENSHOTS, launchChromium, openPage, probeFocus, screenshot, sha256File, tabTo } from "./browser";

let worker: Worker;
let browser: Browser;
let page: Page;
let cspViolations: string[];
const email = `browser-${Date.now()}@example.com`;
let secret = "";
let scratchId = "";
let shopId = "";

beforeAll(async () => {
  [worker, browser] = await Promise.all([startWorker(), launchChromium()]);
  // A viewer in New York with US English: dates must come out in that zone and language.
  ({ page, cspViolations } = await openPage(browser, {
    locale: "en-US",
    timezoneId: "America/New_York",
    permissions: ["clipboard-read", "clipboard-write"],
  }));
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

const startExportWith = (token: string, databaseId: string) =>
  fetch(`${worker.url}/api/v1/dbs/${databaseId}/export`, { method: "POST", headers: { Authorization: `Bearer ${token}` } });

async function createDatabase(name: string): Promise<string> {
  await page.goto(`${worker.url}/console/databases`);
  await page.getByLabel("Database name").fill(name);
  await page.getByRole("button", { name: "Create database" }).click();
  await page.waitForURL(/\/console\/databases\/[0-9a-f-]{36}$/);
  return page.url().split("/").pop()!;
}

describe("console in Chromium", () => {
  it("signs up from the sign-in page and lands on an empty databases list", async () => {
    await page.goto(`${worker.url}/console`);
    await page.waitForURL(/\/console\/signin$/);
    await screenshot(page, "01-sign-in");
    await page.getByRole("link", { name: "Create one" }).click();
    await page.getByLabel("Email").fill("not-an-email");
    await page.getByLabel("Password").fill("short");
    await page.getByRole("button", { name: "Create account" }).click();
    await expect.poll(() => page.locator("#f-email-error").textContent()).toBe("Enter a valid email address.");
    await expect.poll(() => page.locator("#f-password-error").textContent()).toBe("Use at least 8 characters for the password.");
    await screenshot(page, "02-sign-up-errors");

    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("correct horse battery");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL(/\/console\/databases$/);
    await page.getByText("No databases yet").waitFor();
    await screenshot(page, "03-databases-empty");
  });

  it("creates the token ci-backup with the keyboard only and shows its secret once", async () => {
    scratchId = await createDatabase("scratch");
    await page.goto(`${worker.url}/console/profile`);
    await page.getByText("No tokens yet").waitFor();
    const stops = await tabTo(page, (f) => f.name === "Token name");
    // Tab order: skip link, brand, navigation (Databases, Apps, Billing, Notifications, Profile), sign out, then the form.
    expect(stops.map((s) => s.name)).toEqual(["Skip to content", "Control plane", "Databases", "Apps", "Billing", "Notifications", "Profile", "Sign out", "Token name"]);
    expect(stops.every((s) => s.ringVisible)).toBe(true);
    await page.keyboard.type("ci-backup");
    await page.keyboard.press("Tab");
    expect(await probeFocus(page)).toEqual({ tag: "button", name: "Create token", ringVisible: true });
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/console\/profile$/);

    const field = page.getByLabel("Token secret");
    secret = await field.inputValue();
    expect(secret).toMatch(/^dbx_[0-9A-Za-z]{36}$/);
    expect(await probeFocus(page)).toMatchObject({ tag: "input", name: "Token secret" });
    await page.getByText("it will not be shown again").waitFor();
    await screenshot(page, "04-token-created");
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(secret);

    expect((await startExportWith(secret, scratchId)).status).toBe(200);
  });

  it("never shows the secret again after a reload; the list has the masked prefix and dates", async () => {
    await page.reload();
    await expect.poll(() => page.getByLabel("Token secret").count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    const row = page.locator("tbody tr", { hasText: "ci-backup" });
    await expect.poll(() => row.locator("code").textContent()).toBe(`${secret.slice(0, 8)}••••••••`);
    // Last used: the API call above, shown in New York time; exact UTC on hover.
    const lastUsed = row.locator("time").nth(1);
    expect(await lastUsed.getAttribute("title")).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    const expected = await lastUsed.evaluate((el) =>
      new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short", timeZone: "America/New_York" }).format(
        new Date(el.getAttribute("datetime")!),
      ),
    );
    await expect.poll(() => lastUsed.textContent()).toBe(expected);
    await screenshot(page, "05-tokens-after-reload");
  });

  it("revokes with the keyboard behind a confirmation; the API then refuses the token", async () => {
    await page.getByLabel("Token name").focus();
    await tabTo(page, (f) => f.name === "Revoke ci-backup", 5);
    expect((await probeFocus(page)).ringVisible).toBe(true);
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/revoke$/);
    await page.getByRole("heading", { name: "Revoke “ci-backup”?" }).waitFor();
    expect(await probeFocus(page)).toEqual({ tag: "button", name: "Revoke token", ringVisible: true });
    await screenshot(page, "06-revoke-confirm");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/console\/profile$/);
    await page.getByText("Token “ci-backup” revoked.").waitFor();
    await page.getByText("No tokens yet").waitFor();
    await screenshot(page, "07-token-revoked");

    const refused = await startExportWith(secret, scratchId);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ success: false, code: "UNAUTHORIZED" });
  });

  it("fills a database in the SQL console and shows errors next to the box", async () => {
    shopId = await createDatabase("shop");
    await page.getByText("No exports yet").waitFor();
    const sql = page.getByLabel("SQL", { exact: true });
    await sql.fill(
      "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, total REAL);\n" +
        "INSERT INTO orders (customer, total) VALUES ('Zoë ''quoted''', 12.5), ('Bob', 99.99), ('Ana', NULL);",
    );
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByText("Statement 2: 3 rows written.").waitFor();

    await page.getByLabel("SQL", { exact: true }).fill("SELECT * FROM orders ORDER BY id");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByText("3 rows.").waitFor();
    await expect.poll(() => page.locator("table.results tbody tr").count()).toBe(3);
    await expect.poll(() => page.locator("table.results td").nth(1).textContent()).toBe("Zoë 'quoted'");
    await screenshot(page, "08-sql-results");

    await page.getByLabel("SQL", { exact: true }).fill("SELECT * FROM nowhere");
    await page.getByRole("button", { name: "Run" }).click();
    await expect.poll(() => page.locator("#f-sql-error").textContent()).toMatch(/^Statement 1: no such table: nowhere/);
    expect(await page.getByLabel("SQL", { exact: true }).getAttribute("aria-invalid")).toBe("true");
    await screenshot(page, "09-sql-error");
  });

  it("starts an export, sees it ready, downloads it from the page and checks its SHA-256", async () => {
    await page.goto(`${worker.url}/console/databases/${shopId}`);
    await page.getByRole("button", { name: "Start export" }).click();
    await page.getByText("Export started.").waitFor();
    await screenshot(page, "10-export-started");
    const url = page.url();
    // Locally the job is done within a moment; the console script would swap the row in if not.
    await page.locator("#exports-live [data-status=ready]").waitFor({ timeout: 30_000 });
    expect(page.url()).toBe(url);
    await page.locator("details.digest summary").click();
    await screenshot(page, "11-export-ready");

    const shown = await page.locator("[data-sha256]").getAttribute("data-sha256");
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download" }).click()]);
    const saved = join(SCREENSHOTS, `${shopId}.sql.gz`);
    await download.saveAs(saved);
    expect(download.suggestedFilename()).toMatch(/\.sql\.gz$/);
    expect(sha256File(saved)).toBe(shown);
    const dump = gunzipSync(readFileSync(saved)).toString("utf8");
    expect(dump).toContain("CREATE TABLE orders");
    expect(dump).toContain("Zoë ''quoted''");

    await page.getByRole("button", { name: "Start export" }).click();
    await page.getByText(/exported recently\. You can start the next export in \d+ minutes?/).waitFor();
    await screenshot(page, "12-export-cooldown");
  });

  it("refreshes the export list in place while an export is prepared, and announces it", async () => {
    // An export held `running` in D1 (a real one finishes before the page has loaded).
    const exportId = "00000000-0000-4000-8000-00000000e001";
    await localD1(worker.persistTo, `INSERT INTO exports (id, database_id, status, created_at, deadline_at) VALUES ('${exportId}', '${scratchId}', 'running', ${Date.now()}, ${Date.now() + 3_600_000})`);
    await page.goto(`${worker.url}/console/databases/${scratchId}`);
    await page.locator(`[data-export-id="${exportId}"] [data-status=running]`).waitFor();
    expect(await page.getByRole("link", { name: "Refresh" }).count()).toBe(0);
    await screenshot(page, "12b-export-running");
    await localD1(
      worker.persistTo,
      `UPDATE exports SET status = 'ready', finished_at = ${Date.now()}, size_bytes = 1536, sha256 = '${"c".repeat(64)}' WHERE id = '${exportId}'`,
    );
    await page.locator(`[data-export-id="${exportId}"] [data-status=ready]`).waitFor({ timeout: 30_000 });
    expect(await page.locator(`[data-export-id="${exportId}"] abbr`).textContent()).toBe("1.5 KiB");
    expect(await page.locator("[data-live-announce]").textContent()).toBe("The export is ready.");
  });

  it("signs out and is refused the console afterwards", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/console\/signin$/);
    await page.getByText("You have signed out.").waitFor();
    await page.goto(`${worker.url}/console/profile`);
    await page.waitForURL(/\/console\/signin\?next=%2Fconsole%2Fprofile$/);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect((await page.request.get(`${worker.url}/console/api/tokens`)).status()).toBe(401);
    await screenshot(page, "13-signed-out");
    expect(cspViolations).toEqual([]);
  });
});
