/**
 * The app pages in Chromium against a real `wrangler dev`, a real dockerd and the dev forge:
 * create an app, press Deploy, watch `Deploying…` turn into the live link, open the app at its
 * hostname, then a failed deploy's red panel and its log. Screenshots land in test-output/browser.
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

beforeAll(async () => {
  [stack, browser] = await Promise.all([startAppsStack(), launchChromium()]);
  ({ page, cspViolations } = await openPage(browser, { locale: "en-GB", timezoneId: "Europe/Paris" }));
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** Fills the New app form and creates the app; returns its page's address. */
async function createApp(name: string, repo: string, subdomain: string): Promise<string> {
  await page.goto(`${stack.worker.url}/console/apps/new`);
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("Repository").fill(repo);
  await page.getByLabel("Subdomain").fill(subdomain);
  await page.getByRole("button", { name: "Create app" }).click();
  await page.waitForURL(/\/console\/apps\/[0-9a-f-]{36}$/);
  return page.url();
}

describe("apps in Chromium", () => {
  it("signs up and finds an empty Apps list in the navigation", async () => {
    await signUpInConsole(page, stack.worker.url, `apps-browser-${run}@example.com`);
    // The operator credits the wallet, so the first deploy below can be charged.
    await creditAccount(stack.worker.url, `apps-browser-${run}@example.com`, 10_000);
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Apps" }).click();
    await page.waitForURL(/\/console\/apps$/);
    await page.getByText("No apps yet").waitFor();
    await screenshot(page, "apps-01-empty");
  });

  it("creates an app (a subdomain error shown under its field first), deploys it, sees Deploying… and then the live link", async () => {
    const repo = await repository(stack, `hello-${run}`, httpdApp(`<h1>Hello from the browser test</h1>\n<!-- run ${run}: a new page, so the build below is not cached -->\n`, {
      port: 8080,
      // Holds the build a few seconds so the page is seen while it runs.
      extra: 'RUN ["/bin/busybox", "sleep", "4"]\n',
    }));
    await page.getByRole("link", { name: "New app" }).click();
    await page.getByLabel("Name").fill("hello");
    await page.getByLabel("Repository").fill(repo);
    await page.getByLabel("Subdomain").fill("app-hello");
    expect(await page.getByLabel("Branch").inputValue()).toBe("main");
    expect(await page.getByLabel("Dockerfile path").inputValue()).toBe("Dockerfile");
    await expect.poll(() => page.getByRole("radio", { name: /^Lite/ }).isChecked()).toBe(true);
    await page.getByRole("radio", { name: /^Starter/ }).check();
    await page.getByRole("button", { name: "Create app" }).click();
    await expect.poll(() => page.locator("#f-subdomain-error").textContent()).toBe('Subdomains starting with "app-" are kept for generated names.');
    expect(await page.getByLabel("Repository").inputValue()).toBe(repo);
    expect(await page.getByRole("radio", { name: /^Starter/ }).isChecked()).toBe(true);
    await screenshot(page, "apps-02-new-app-error");

    const subdomain = `hello-${run}`;
    await page.getByLabel("Subdomain").fill(subdomain);
    await page.getByRole("button", { name: "Create app" }).click();
    await page.waitForURL(/\/console\/apps\/[0-9a-f-]{36}$/);
    await page.getByText("App “hello” created.").waitFor();
    await screenshot(page, "apps-03-created");
    // Issue 13: what the first Deploy will charge is said before it is pressed.
    expect(await page.locator("[data-billing=deploy]").textContent()).toBe(
      "Deploy: Deploy charges 2,500 DA now for the first month of the Starter plan, before the build starts.",
    );
    expect(await page.locator("[data-billing=summary]").textContent()).toMatch(/^Not charged yet\./);

    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    const deploying = page.getByRole("button", { name: "Deploying…" });
    await deploying.waitFor();
    expect(await deploying.isDisabled()).toBe(true);
    await screenshot(page, "apps-04-deploying");

    // The console script follows the deploy and redraws the page once it is live.
    await page.getByRole("button", { name: "Redeploy" }).waitFor({ timeout: 90_000 });
    await page.locator("[data-app-status=running]").waitFor();
    await expect.poll(() => page.locator("[data-app-announce]").textContent()).toBe("The deploy is live.");
    expect(await page.getByText("first EXPOSE line, 8080").count()).toBe(1);
    for (const label of ["Restart", "Stop", "Change plan"]) await page.getByRole("button", { name: label }).waitFor();
    const link = page.getByRole("link", { name: `${subdomain}.localhost` });
    expect(await link.getAttribute("href")).toBe(`http://${subdomain}.localhost:${stack.worker.port}`);
    await screenshot(page, "apps-05-live");
    // The app page's billing lines after the first deploy.
    await expect.poll(() => page.locator("[data-billing=summary]").textContent()).toMatch(/^2,500 DA paid for the period \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d; it renews then at 2,500 DA\./);
    expect(await page.locator("[data-billing=deploy]").textContent()).toBe("Redeploy: Redeploy charges nothing.");
    expect(await page.locator("[data-billing=stop]").textContent()).toMatch(/nothing is charged: the paid period's end moves later by exactly the time stopped/);
    expect(await page.locator("[data-billing=plan]").textContent()).toMatch(/^Nothing is charged or refunded now; the new plan's price applies from the next billing cycle, on \d{4}-\d\d-\d\d\.$/);
    const appUrl = page.url();

    await page.getByRole("link", { name: /^Log of deploy/ }).first().click();
    await page.locator("#deploy-log").getByText(/Live: traffic switched/).waitFor();
    await screenshot(page, "apps-06-log");

    // Chromium resolves *.localhost to the loopback address itself.
    await page.goto(`http://${subdomain}.localhost:${stack.worker.port}/`);
    await page.getByRole("heading", { name: "Hello from the browser test" }).waitFor();
    await screenshot(page, "apps-07-app-served");

    // Delete's confirmation says the paid remainder is not refunded.
    await page.goto(`${appUrl}/delete`);
    await expect.poll(() => page.locator("[data-billing=delete]").textContent()).toMatch(/^Billing ends at once\. The paid remainder \(until \d{4}-\d\d-\d\d\) is not refunded\.$/);
    await page.goto(appUrl);
  });

  it("shows the wallet on the Billing page: the balance and the ledger, newest first", async () => {
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Billing" }).click();
    await page.waitForURL(/\/console\/billing$/);
    await page.getByRole("heading", { name: "Billing", level: 1 }).waitFor();
    expect(await page.locator("[data-balance]").getAttribute("data-balance")).toBe("7500");
    expect(await page.locator("[data-balance]").textContent()).toBe("7,500 DA");
    const rows = page.locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.nth(0).getAttribute("data-entry-kind")).toBe("charge");
    expect(await rows.nth(0).textContent()).toContain("First month of the Starter plan");
    expect(await rows.nth(0).textContent()).toContain("hello");
    expect(await rows.nth(0).locator("td.num").textContent()).toBe("−2,500 DA");
    expect(await rows.nth(1).locator("td.num").textContent()).toBe("+10,000 DA");
    await screenshot(page, "apps-07b-billing");
  });

  it("shows the red panel of a deploy with no build file, with the files found and the link to the full log", async () => {
    const repo = await repository(stack, `nofile-${run}`, { "README.md": "no build file here\n", "docker/Containerfile": "FROM scratch\n" });
    await createApp("nofile", repo, `nofile-${run}`);
    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    const panel = page.getByRole("region", { name: "The last deploy failed" });
    await panel.waitFor({ timeout: 60_000 });
    const message = (await panel.locator(".failure-message").textContent()) ?? "";
    expect(message).toContain("Dockerfile");
    expect(message).toContain("docker/Containerfile");
    await page.locator("[data-app-status=failed]").waitFor();
    await page.getByRole("button", { name: "Redeploy" }).waitFor();
    // Issue 13: a first deploy that failed stays charged, and the page says so.
    expect(await page.locator("[data-billing=warning]").textContent()).toMatch(/^The first month \(1,200 DA\) was charged when Deploy was pressed; the paid period started then/);
    await screenshot(page, "apps-08-red-panel");

    await panel.getByRole("link", { name: /^Read the full log/ }).click();
    await page.locator("#deploy-log").getByText(/Deploy failed:/).waitFor();
    await screenshot(page, "apps-09-failed-log");
  });

  it("shows the port message when the app listens on 127.0.0.1 only", async () => {
    const repo = await repository(stack, `loopback-${run}`, httpdApp("<h1>unreachable</h1>\n", { port: 3000, bind: "127.0.0.1" }));
    await createApp("loopback", repo, `loopback-${run}`);
    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    const panel = page.getByRole("region", { name: "The last deploy failed" });
    await panel.waitFor({ timeout: 90_000 });
    expect(await panel.locator(".failure-message").textContent()).toMatch(/port 3000/);
    await screenshot(page, "apps-10-port-panel");

    await page.goto(`${stack.worker.url}/console/apps`);
    for (const name of ["hello", "nofile", "loopback"]) await page.getByRole("link", { name, exact: true }).waitFor();
    await screenshot(page, "apps-11-list");
    expect(cspViolations).toEqual([]);
  });
});
