/**
 * Live logs in Chromium against a real `wrangler dev`, real dockerd and the dev forge: the app
 * page's Logs section shows the app's output as it is printed (EventSource through the console's
 * CSP), masks env values, searches through the JSON route and goes back to live.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppJson, type AppsStack, BUSYBOX, creditAccount, curlApp, repository, startAppsStack } from "../e2e/apps-harness";
import { launchChromium, openPage, screenshot, signUpInConsole } from "./browser";

let stack: AppsStack;
let browser: Browser;
let page: Page;
let cspViolations: string[];
const run = Date.now().toString(36);
const SECRET = "browser-secret-9931";

beforeAll(async () => {
  [stack, browser] = await Promise.all([startAppsStack(), launchChromium()]);
  ({ page, cspViolations } = await openPage(browser, { locale: "en-GB", timezoneId: "Europe/Paris" }));
});

afterAll(async () => {
  // Stopping the stack removes the apps' containers, networks and images (test/e2e/harness.ts).
  await browser?.close();
  await stack?.stop();
});

describe("live logs in Chromium", () => {
  it("shows printed lines live with env values masked, searches them, and goes back to live", async () => {
    const email = `logs-browser-${run}@example.com`;
    await signUpInConsole(page, stack.worker.url, email);
    await creditAccount(stack.worker.url, email, 10_000);

    const repo = await repository(stack, `logs-${run}`, {
      Dockerfile:
        "FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nEXPOSE 8080\n" +
        'CMD ["/bin/busybox", "sh", "-c", "echo booting with $API_TOKEN; exec /bin/busybox httpd -f -vv -p 0.0.0.0:8080 -h /www"]\n',
      busybox: BUSYBOX,
      "www/index.html": `<p>logs ${run}</p>`,
    });
    const api = async <T,>(method: string, path: string, data?: unknown): Promise<T> => {
      const res = await page.request.fetch(`${stack.worker.url}${path}`, { method, headers: { Origin: stack.worker.url, "Content-Type": "application/json" }, ...(data ? { data } : {}) });
      if (res.status() >= 300) throw new Error(`${method} ${path} answered ${res.status()}: ${await res.text()}`);
      return (await res.json()) as T;
    };
    const app = await api<AppJson>("POST", "/console/api/apps", { name: "Logs", repository: repo, subdomain: `logs-${run}` });
    await api("PUT", `/console/api/apps/${app.id}/env`, { version: 0, variables: [{ key: "API_TOKEN", value: SECRET }] });
    const { deploy } = await api<{ deploy: { id: string } }>("POST", `/console/api/apps/${app.id}/deploy`);
    // The deploy's page follows its log line by line while it runs (SSE), through to the switch.
    await page.goto(`${stack.worker.url}/console/apps/${app.id}/deploys/${deploy.id}`);
    await page.locator("#deploy-log").getByText(/Live: traffic switched/).waitFor({ timeout: 90_000 });
    expect(await page.locator("#deploy-log").textContent()).toContain("booting with ****");
    await expect.poll(async () => (await api<AppJson>("GET", `/console/api/apps/${app.id}`)).latest_deploy?.status, { timeout: 90_000, interval: 500 }).toBe("live");

    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => errors.push(m.text()));
    await page.goto(`${stack.worker.url}/console/apps/${app.id}/logs`);

    const logs = page.locator("#live-logs");
    await logs.getByText("booting with ****").waitFor({ timeout: 15_000 });
    await expect.poll(() => page.locator("#logs-status").textContent()).toBe("Live.");

    const marker = `marker-${run}`;
    await curlApp(stack, app.subdomain, `/${marker}`);
    await logs.getByText(`url:/${marker}`).waitFor({ timeout: 5_000 });
    expect(await logs.textContent()).not.toContain(SECRET);
    await screenshot(page, "logs-01-live");

    await page.getByLabel("Search text").fill(marker);
    await page.getByRole("button", { name: "Search logs" }).click();
    await expect.poll(() => page.locator("#logs-status").textContent()).toBe("1 line found.");
    expect((await logs.textContent())!.trim().split("\n")).toHaveLength(1);
    expect(await logs.textContent()).toContain(`url:/${marker}`);
    await screenshot(page, "logs-02-search");

    await page.getByRole("link", { name: "Back to live logs" }).click();
    await logs.getByText("booting with ****").waitFor();
    const later = `later-${run}`;
    await curlApp(stack, app.subdomain, `/${later}`);
    await logs.getByText(`url:/${later}`).waitFor({ timeout: 5_000 });

    // The tab is hidden, then shown again: what was printed meanwhile is fetched from the JSON
    // route and merged with what the stream brought, each line once.
    const setHidden = (hidden: boolean) =>
      page.evaluate(`Object.defineProperty(document, "hidden", { configurable: true, get: () => ${hidden} }); document.dispatchEvent(new Event("visibilitychange"));`);
    await setHidden(true);
    const away = `away-${run}`;
    await curlApp(stack, app.subdomain, `/${away}`);
    await setHidden(false);
    await logs.getByText(`url:/${away}`).waitFor({ timeout: 5_000 });
    await expect.poll(async () => (await logs.textContent())!.split(`url:/${away}`).length - 1, { timeout: 3_000 }).toBe(1);
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await logs.textContent())!.split(`url:/${away}`).length - 1).toBe(1);
    expect(cspViolations).toEqual([]);
    expect(errors.filter((e) => !/Failed to load resource/.test(e))).toEqual([]);
  });
});
