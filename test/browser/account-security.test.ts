/**
 * The profile's sign-in parts in Chromium against a real `wrangler dev`: two-step sign-in set up
 * by scanning (here: reading the key under the QR code) and confirmed with a code, the recovery
 * codes shown once, sign-in then asking for a code, the sessions list with "Sign out everywhere
 * else", and a refused password change. axe-core finds nothing on any of these pages.
 */
import type { Browser, Page } from "playwright-core";
import { Secret, TOTP } from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Worker, startWorker } from "../e2e/harness";
import { axeViolations } from "./axe";
import { launchChromium, openPage, screenshot, signUpInConsole } from "./browser";

let worker: Worker;
let browser: Browser;
let page: Page;
let cspViolations: string[];
const email = `security-${Date.now()}@example.com`;
const PASSWORD = "correct horse battery";
let authenticator: TOTP;

beforeAll(async () => {
  [worker, browser] = await Promise.all([startWorker(), launchChromium()]);
  ({ page, cspViolations } = await openPage(browser, { locale: "en-US" }));
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

async function expectAxeClean(name: string) {
  await screenshot(page, name);
  expect(await axeViolations(page), name).toEqual([]);
}

/** Signs in from a fresh sign-in page; with a code, on the page that asked for it (password typed again). */
async function signIn(p: Page, code?: string) {
  if (code === undefined) {
    await p.goto(`${worker.url}/console/signin`);
    await p.getByLabel("Email").fill(email);
  }
  await p.getByLabel("Password", { exact: true }).fill(PASSWORD);
  if (code !== undefined) await p.getByLabel("Code from your authenticator app").fill(code);
  await p.getByRole("button", { name: "Sign in", exact: true }).click();
}

describe("two-step sign-in, sessions and password on the profile page", () => {
  it("shows the new sections without an accessibility violation", async () => {
    await signUpInConsole(page, worker.url, email);
    await page.goto(`${worker.url}/console/profile`);
    await expect.poll(() => page.getByRole("heading", { name: "Sessions" }).isVisible()).toBe(true);
    await expect.poll(() => page.locator("#session-list tbody tr").count()).toBe(1);
    expect(await page.locator("#session-list").textContent()).toContain("This session");
    await expectAxeClean("security-profile");
  });

  it("sets up two-step sign-in from the QR page and shows ten recovery codes once", async () => {
    await page.getByRole("button", { name: "Set up two-step sign-in" }).click();
    await page.waitForURL(/\/console\/profile\/totp\/setup$/);
    expect(await page.locator('[role="img"] svg').count()).toBe(1);
    await expectAxeClean("security-totp-setup");
    const secret = (await page.locator("#totp-secret").textContent())!.trim();
    authenticator = new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 });

    await page.getByLabel("Code from the app").fill("000000" === authenticator.generate() ? "111111" : "000000");
    await page.getByRole("button", { name: "Turn on two-step sign-in" }).click();
    await expect.poll(() => page.locator("#f-code-error").textContent()).toContain("not right");
    await expectAxeClean("security-totp-setup-error");

    await page.getByLabel("Code from the app").fill(authenticator.generate());
    await page.getByRole("button", { name: "Turn on two-step sign-in" }).click();
    await expect.poll(() => page.locator("#recovery-codes li").count()).toBe(10);
    await expectAxeClean("security-recovery-codes");
    await page.goto(`${worker.url}/console/profile`);
    expect(await page.locator("#two-step-heading + p").textContent()).toContain("10 unused recovery codes");
    expect(await page.locator("#recovery-codes").count()).toBe(0);
  });

  it("asks for a code at sign-in, in a form without violations, and signs in with the next code", async () => {
    const other = await openPage(browser, { locale: "en-US" });
    await signIn(other.page);
    await expect.poll(() => other.page.locator("#f-code-error").textContent()).toContain("6-digit code");
    expect(await axeViolations(other.page)).toEqual([]);
    await signIn(other.page, authenticator.generate({ timestamp: Date.now() + 30_000 }));
    await other.page.waitForURL(/\/console\/databases$/);
    expect(other.cspViolations).toEqual([]);

    await page.goto(`${worker.url}/console/profile`);
    await expect.poll(() => page.locator("#session-list tbody tr").count()).toBe(2);
    await expectAxeClean("security-two-sessions");
    await page.getByRole("button", { name: "Sign out everywhere else" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Signed out 1 other session");
    await other.page.goto(`${worker.url}/console/profile`);
    await other.page.waitForURL(/\/console\/signin/);
    await other.context.close();
  });

  it("refuses a common new password with a sentence saying so", async () => {
    await page.goto(`${worker.url}/console/profile`);
    await page.getByLabel("Current password").fill(PASSWORD);
    await page.getByLabel("New password").fill("password123");
    await page.getByRole("button", { name: "Change password" }).click();
    await expect.poll(() => page.locator("#f-new_password-error").textContent()).toContain("10,000 most common");
    await expectAxeClean("security-password-refused");
    expect(cspViolations).toEqual([]);
  });
});
