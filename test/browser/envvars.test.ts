/**
 * The app page's Environment section in Chromium against a real `wrangler dev` (issue 14): a paste
 * with a comment, a `#` in a value, a PEM block and a reserved key; the messages under the lines
 * and rows; Add variable; replace with its REPLACE confirmation. No container is needed: the app
 * is never deployed, so a save only stores. Screenshots land in test-output/browser.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Worker, startWorker } from "../e2e/harness";
import { EC_PEM } from "../unit/envvars-pem";
import { launchChromium, openPage, screenshot, signUpInConsole } from "./browser";

let worker: Worker;
let browser: Browser;
let page: Page;
let cspViolations: string[];
let appUrl: string;
const run = Date.now().toString(36);

beforeAll(async () => {
  [worker, browser] = await Promise.all([startWorker(), launchChromium()]);
  ({ page, cspViolations } = await openPage(browser, { locale: "en-GB", timezoneId: "Europe/Paris" }));
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

const pasteBox = () => page.getByLabel("Paste variables");
const pasteErrors = () => page.locator("#env-paste-errors li").allTextContents();
const rowErrors = (row: number) => page.locator(`#env-row-${row}-error li`).allTextContents();
const notice = () => page.locator("p.notice").textContent();

describe("environment variables in Chromium", () => {
  it("signs up and creates an app", async () => {
    await signUpInConsole(page, worker.url, `env-browser-${run}@example.com`);
    await page.goto(`${worker.url}/console/apps/new`);
    await page.getByLabel("Name").fill("envapp");
    await page.getByLabel("Repository").fill("https://git.example.com/acme/envapp");
    await page.getByLabel("Subdomain").fill(`envapp-${run}`);
    await page.getByRole("button", { name: "Create app" }).click();
    await page.waitForURL(/\/console\/apps\/[0-9a-f-]{36}$/);
    appUrl = page.url();
    // The variables are on the app's Environment tab.
    await page.getByRole("navigation", { name: "App" }).getByRole("link", { name: "Environment" }).click();
    await page.waitForURL(`${appUrl}/environment`);
    await page.getByRole("heading", { name: "Environment" }).waitFor();
  });

  it("a paste with a comment, a # in a value, a PEM block and a reserved key: the reserved key's line is named and nothing is saved", async () => {
    const text = `# database settings\nAPI_URL=https://api.example.com/v1#section\nPRIVATE_KEY=${EC_PEM}\nPORT=8080\nexport GREETING="hello world" # note\n`;
    await pasteBox().fill(text);
    await page.getByRole("button", { name: "Preview" }).click();
    await expect.poll(pasteErrors).toEqual(["Line 8 (PORT): PORT is reserved by the platform."]);
    expect(await pasteBox().inputValue()).toBe(text);
    expect(await page.locator("#env-key-0").inputValue()).toBe("");
    await screenshot(page, "env-01-paste-reserved");

    await pasteBox().fill(text.replace("PORT=8080\n", "PORTAL=8080\n"));
    await page.getByRole("button", { name: "Preview" }).click();
    await page.getByRole("heading", { name: "Review the pasted variables" }).waitFor();
    expect(await page.locator("[data-diff=added] code").allTextContents()).toEqual(["API_URL", "GREETING", "PORTAL", "PRIVATE_KEY"]);
    expect(await page.locator("[data-diff=removed] code").count()).toBe(0);
    await screenshot(page, "env-02-preview");
    await page.getByRole("button", { name: "Save variables" }).click();
    await page.waitForURL(`${appUrl}/environment`);
    expect(await notice()).toBe("Environment variables saved. They are used from the first deploy.");
    const values = Object.fromEntries(
      await Promise.all([0, 1, 2, 3].map(async (i) => [await page.locator(`#env-key-${i}`).inputValue(), await page.locator(`#env-value-${i}`).inputValue()])),
    );
    expect(values).toEqual({ API_URL: "https://api.example.com/v1#section", PRIVATE_KEY: EC_PEM, PORTAL: "8080", GREETING: "hello world" });
    await screenshot(page, "env-03-saved");
  });

  it("rows: every message under its row, nothing saved; Add variable adds a row", async () => {
    await page.locator("#env-key-2").fill("port");
    await page.locator("#env-key-3").fill("9LIVES");
    await page.getByRole("button", { name: "Save variables" }).click();
    await expect.poll(() => rowErrors(2)).toEqual(["port is reserved by the platform.", "Use uppercase letters, digits, and underscores for the key."]);
    expect(await rowErrors(3)).toEqual(["Use uppercase letters, digits, and underscores for the key."]);
    expect(await rowErrors(0)).toEqual([]);
    expect(await page.locator("#env-key-2").getAttribute("aria-invalid")).toBe("true");
    await screenshot(page, "env-04-row-messages");

    await page.locator("#env-key-2").fill("PORTAL");
    await page.locator("#env-key-3").fill("GREETING");
    await page.getByRole("button", { name: "Add variable" }).click();
    await page.locator("#env-key-4").waitFor();
    // The console script added the row in place: the page was not sent again (the messages are still there).
    expect(await rowErrors(3)).toEqual(["Use uppercase letters, digits, and underscores for the key."]);
    expect(await page.evaluate("document.activeElement && document.activeElement.id")).toBe("env-key-4");
    await page.locator("#env-key-4").fill("FEATURE_FLAG");
    await page.locator("#env-value-4").fill("on");
    await page.getByRole("button", { name: "Save variables" }).click();
    await page.waitForURL(`${appUrl}/environment`);
    expect(await notice()).toBe("Environment variables saved. They are used from the first deploy.");
    expect(await page.locator("#env-key-4").inputValue()).toBe("FEATURE_FLAG");
  });

  it("replace lists the variables it deletes and needs REPLACE typed", async () => {
    await pasteBox().fill("GREETING=bonjour\n");
    await page.getByRole("radio", { name: /^Replace/ }).check();
    await page.getByRole("button", { name: "Preview" }).click();
    await page.getByRole("heading", { name: "Review the pasted variables" }).waitFor();
    expect(await page.locator("[data-diff=removed] code").allTextContents()).toEqual(["API_URL", "FEATURE_FLAG", "PORTAL", "PRIVATE_KEY"]);
    expect(await page.locator("[data-diff=changed] code").allTextContents()).toEqual(["GREETING"]);
    await page.getByText("Replace deletes these 4 variables:").waitFor();
    await page.getByLabel("Type REPLACE to delete them").fill("replace");
    await page.getByRole("button", { name: "Save variables" }).click();
    await expect.poll(() => page.locator("#f-confirm-error").textContent()).toBe("Type REPLACE in capital letters to delete these variables.");
    await screenshot(page, "env-05-replace-confirm");

    await page.getByLabel("Type REPLACE to delete them").fill("REPLACE");
    await page.getByRole("button", { name: "Save variables" }).click();
    await page.waitForURL(`${appUrl}/environment`);
    expect(await notice()).toBe("Environment variables saved. They are used from the first deploy.");
    expect(await page.locator("#env-key-0").inputValue()).toBe("GREETING");
    expect(await page.locator("#env-value-0").inputValue()).toBe("bonjour");
    expect(await page.locator("#env-key-1").count()).toBe(0);
    await screenshot(page, "env-06-replaced");
    expect(cspViolations).toEqual([]);
  });
});
