/**
 * The Notifications page in Chromium against a real `wrangler dev` (docs/alerts.md): reached from
 * the console's navigation, a webhook channel added with the keyboard-usable form, its secret
 * shown once, a refused address named under its field, a test delivered to a stand-in receiver
 * that checks its signature; axe-core finds nothing on each screen and the CSP is never broken.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeReceiver } from "../fakes/fake-receiver";
import { type Worker, startWorker } from "../e2e/harness";
import { axeViolations } from "./axe";
import { launchChromium, openPage, screenshot, signUpInConsole } from "./browser";

let worker: Worker;
let browser: Browser;
let page: Page;
let cspViolations: string[];
let receiver: Awaited<ReturnType<typeof startFakeReceiver>>;

beforeAll(async () => {
  [worker, browser, receiver] = await Promise.all([startWorker(), launchChromium(), startFakeReceiver()]);
  ({ page, cspViolations } = await openPage(browser));
  await signUpInConsole(page, worker.url, `alerts-${Date.now()}@example.com`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await receiver?.close();
});

describe("notifications page in Chromium", () => {
  it("adds a webhook, shows its secret once, sends a test the receiver verifies; axe-clean throughout", async () => {
    await page.getByRole("link", { name: "Notifications" }).click();
    await page.waitForURL(/\/console\/notifications$/);
    expect(await axeViolations(page), "empty page").toEqual([]);

    // A metadata address is refused under its field.
    await page.getByLabel("Address").fill("http://169.254.169.254/latest");
    await page.getByRole("button", { name: "Add channel" }).click();
    await expect.poll(() => page.locator("#f-url-error").textContent()).toBe("Notifications are never sent to link-local, metadata or reserved addresses.");
    expect(await axeViolations(page), "refused address").toEqual([]);
    await screenshot(page, "notifications-01-refused");

    const inbox = `browser-${Date.now()}`;
    await page.getByLabel("Kind").selectOption("webhook");
    await page.getByLabel("Address").fill(`${receiver.url}/hooks/${inbox}`);
    await page.getByRole("checkbox", { name: /deploy\.live/ }).check();
    await page.getByRole("button", { name: "Add channel" }).click();
    await page.waitForURL(/\/console\/notifications$/);
    const secret = await page.getByLabel("Signing secret").inputValue();
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(await axeViolations(page), "secret shown").toEqual([]);
    await screenshot(page, "notifications-02-secret");
    await fetch(`${receiver.url}/__control/${inbox}`, { method: "PUT", body: JSON.stringify({ secret }) });

    await page.getByRole("button", { name: /^Send test/ }).click();
    await page.waitForURL(/\/console\/notifications$/);
    expect(await page.getByLabel("Signing secret").count()).toBe(0);
    await expect
      .poll(async () => {
        await page.reload();
        return page.locator('[data-status="delivered"]').count();
      }, { timeout: 20_000 })
      .toBe(1);
    const got = (await (await fetch(`${receiver.url}/__control/${inbox}`)).json()) as { received: { verified: boolean; json: { event: string } }[] };
    expect(got.received.map((r) => [r.json.event, r.verified])).toEqual([["test", true]]);
    expect(await axeViolations(page), "channel and delivery listed").toEqual([]);
    await screenshot(page, "notifications-03-delivered");
    expect(cspViolations).toEqual([]);
  }, 90_000);
});
