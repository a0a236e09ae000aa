/**
 * Passkeys in a real browser (Debian's Chromium) against a real `wrangler dev`, with the DevTools
 * virtual authenticator (`WebAuthn.addVirtualAuthenticator` over CDP) standing in for the
 * device: add a passkey on the profile page, sign out, sign in with it and no password; remove it,
 * and it no longer signs in. The Security log shows what happened; axe finds nothing on the new
 * parts of the console.
 */
import type { Browser, CDPSession, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Worker, startWorker } from "../e2e/harness";
import { axeViolations } from "./axe";
import { launchChromium, openPage, screenshot, signUpInConsole } from "./browser";

let worker: Worker;
let browser: Browser;
let page: Page;
let cdp: CDPSession;
let cspViolations: string[];
const email = `passkey-${Date.now()}@example.com`;

beforeAll(async () => {
  [worker, browser] = await Promise.all([startWorker(), launchChromium()]);
  ({ page, cspViolations } = await openPage(browser, { locale: "en-US" }));
  cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable", { enableUI: false });
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  // A busy machine starts wrangler dev slowly (migrations, then the runtime).
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

async function signOut(): Promise<void> {
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/console\/signin$/);
}

async function signInWithPasskey(): Promise<void> {
  await page.goto(`${worker.url}/console/signin`);
  await page.getByRole("button", { name: "Sign in with a passkey" }).click();
}

describe("passkeys in Chromium", { timeout: 120_000 }, () => {
  it("adds a passkey on the profile page", async () => {
    await signUpInConsole(page, worker.url, email);
    await page.goto(`${worker.url}/console/profile`);
    await page.getByLabel("Passkey name").fill("Virtual key");
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await expect.poll(() => page.locator("#passkey-list tbody tr").count(), { timeout: 15_000 }).toBe(1);
    await expect.poll(() => page.locator("#passkey-list tbody tr td").first().textContent()).toBe("Virtual key");
    await screenshot(page, "passkeys-01-added");
    expect(await axeViolations(page)).toEqual([]);
  });

  it("signs out, then signs in with the passkey and no password", async () => {
    await signOut();
    await signInWithPasskey();
    await page.waitForURL(/\/console\/databases$/, { timeout: 15_000 });
    await page.goto(`${worker.url}/console/profile`);
    expect(await page.locator(".who span").textContent()).toBe(email);
    // Its last use is now shown.
    await expect.poll(() => page.locator("#passkey-list tbody tr td").nth(2).locator("time").count()).toBe(1);
  });

  it("removes the passkey, and it no longer signs in", async () => {
    await page.getByRole("button", { name: "Remove passkey Virtual key" }).click();
    await page.waitForURL(/\/console\/profile$/);
    await expect.poll(() => page.getByText("Passkey “Virtual key” removed.").count()).toBe(1);
    expect(await page.locator("#passkey-list").count()).toBe(0);
    await signOut();
    // The authenticator still holds the credential, but the console no longer knows it.
    await signInWithPasskey();
    await expect.poll(() => page.locator("#passkey-status").textContent(), { timeout: 15_000 }).toBe("The passkey could not be verified. Try again.");
    expect(page.url()).toMatch(/\/console\/signin$/);
    await screenshot(page, "passkeys-02-refused");
  });

  it("shows the Security log with what happened, and axe finds nothing there or on the sign-in page", async () => {
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("correct horse battery");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(/\/console\/databases$/);
    await page.goto(`${worker.url}/console/profile/security-log`);
    const actions = await page.locator("#audit-entries tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-action")));
    expect(actions).toEqual(expect.arrayContaining(["account.signup", "passkey.add", "signin.passkey", "passkey.remove", "signout", "signin.password"]));
    await screenshot(page, "passkeys-03-security-log");
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel("Action").selectOption("passkey.add");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => page.locator("#audit-entries tbody tr").count()).toBe(1);
    expect(await axeViolations(page)).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
