/**
 * Metrics end to end on a real `wrangler dev` and dockerd (docs/metrics.md), then in Chromium:
 * 120 requests to a busybox app, 100 answered 200 by its page and 20 answered 500 by a CGI, show
 * up as exactly 100 `2xx` and 20 `5xx` in the metrics JSON within 30 s (counts are batched in the
 * isolate for up to 10 s, the default); memory and CPU points appear for the running instance from
 * the engine's stats; the Metrics page draws its four charts on the server, and axe-core finds
 * nothing on it.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRepository } from "../../scripts/dev-forge";
import { type AppJson, type AppsStack, BUSYBOX, creditAccount, curlApp, startAppsStack } from "../e2e/apps-harness";
import { axeViolations } from "./axe";
import { launchChromium, openPage, screenshot, signUpInConsole } from "./browser";

interface MetricsJson {
  memory_limit_bytes: number;
  cpu_limit: number;
  points: { requests: Record<"2xx" | "3xx" | "4xx" | "5xx", number>; latency_ms: { p50: number; p95: number } | null; cpu_percent: number | null; memory_bytes: number | null }[];
}

let stack: AppsStack;
let browser: Browser;
let page: Page;
let cspViolations: string[];
const run = Date.now().toString(36);

beforeAll(async () => {
  [stack, browser] = await Promise.all([startAppsStack(), launchChromium()]);
  ({ page, cspViolations } = await openPage(browser));
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

const sum = (m: MetricsJson, cls: "2xx" | "5xx") => m.points.reduce((n, p) => n + p.requests[cls], 0);

describe("app metrics on dockerd", () => {
  it("counts 100 answers 200 and 20 answers 500 exactly, samples CPU and memory, and draws them", async () => {
    await signUpInConsole(page, stack.worker.url, `metrics-${run}@example.com`);
    await creditAccount(stack.worker.url, `metrics-${run}@example.com`, 10_000);
    const api = async <T,>(method: string, path: string, data?: unknown): Promise<T> => {
      const res = await page.request.fetch(`${stack.worker.url}${path}`, { method, headers: { Origin: stack.worker.url, "Content-Type": "application/json" }, ...(data ? { data } : {}) });
      if (res.status() >= 300) throw new Error(`${method} ${path} answered ${res.status()}: ${await res.text()}`);
      return (await res.json()) as T;
    };
    const name = `metrics-${run}`;
    const files = {
      Dockerfile: 'FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nEXPOSE 8080\nCMD ["/bin/busybox", "httpd", "-f", "-p", "0.0.0.0:8080", "-h", "/www"]\n',
      busybox: BUSYBOX,
      "www/index.html": "<p>fine</p>\n",
      "www/cgi-bin/fail": "#!/bin/busybox sh\nprintf 'Status: 500 Internal Server Error\\r\\nContent-Type: text/plain\\r\\n\\r\\nbroken\\n'\n",
    };
    const repo = await createRepository(stack.forgeRoot, "acme", name, files, { branch: "main", modes: { busybox: 0o755, "www/cgi-bin/fail": 0o755 }, forgeUrl: stack.forgeUrl });
    const app = await api<AppJson>("POST", "/console/api/apps", { name: "Counted", repository: repo, subdomain: name });
    await api("POST", `/console/api/apps/${app.id}/deploy`);
    await expect.poll(async () => (await api<AppJson>("GET", `/console/api/apps/${app.id}`)).latest_deploy?.status, { timeout: 120_000, interval: 500 }).toBe("live");

    const statuses: number[] = [];
    for (let i = 0; i < 120; i++) statuses.push((await curlApp(stack, name, i % 6 === 5 ? "/cgi-bin/fail" : "/")).status);
    expect([statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 500).length]).toEqual([100, 20]);

    const metrics = () => api<MetricsJson>("GET", `/console/api/apps/${app.id}/metrics`);
    await expect.poll(async () => { const m = await metrics(); return [sum(m, "2xx"), sum(m, "5xx")]; }, { timeout: 30_000, interval: 500 }).toEqual([100, 20]);
    const counted = await metrics();
    expect(counted.points.some((p) => p.latency_ms !== null)).toBe(true);
    expect([counted.memory_limit_bytes, counted.cpu_limit]).toEqual([256 * 1024 * 1024, 0.25]);

    await expect.poll(async () => (await metrics()).points.some((p) => p.memory_bytes !== null && p.cpu_percent !== null), { timeout: 45_000, interval: 1000 }).toBe(true);
    const sampled = await metrics();
    const point = sampled.points.find((p) => p.memory_bytes !== null)!;
    expect(point.memory_bytes!).toBeGreaterThan(0);
    expect(point.memory_bytes!).toBeLessThanOrEqual(256 * 1024 * 1024);
    expect(point.cpu_percent!).toBeGreaterThanOrEqual(0);
    // Nothing counted twice while the samples came in.
    expect([sum(sampled, "2xx"), sum(sampled, "5xx")]).toEqual([100, 20]);

    await page.goto(`${stack.worker.url}/console/apps/${app.id}`);
    await page.getByRole("link", { name: "Metrics", exact: true }).click();
    await page.waitForURL(`**/console/apps/${app.id}/metrics`);
    expect(await page.locator("svg[role=img]").count()).toBe(4);
    for (const title of ["Requests by status", "Response time", "CPU", "Memory"]) await expect.poll(() => page.getByRole("heading", { name: title, exact: true }).count()).toBe(1);
    // The table alternative holds the same counts as the JSON.
    const cells = await page.locator("#requests-title ~ details tbody tr").evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll("td"), (td) => Number((td as { textContent: string | null }).textContent))));
    expect(cells.reduce((n, [ok]) => n + (ok ?? 0), 0)).toBe(100);
    expect(cells.reduce((n, [, , bad]) => n + (bad ?? 0), 0)).toBe(20);
    // The deploy is marked on each chart (its title names it and its minute) and listed under the charts.
    expect(await page.locator("g.chart-marker[data-marker=deploy-live]").count()).toBe(4);
    expect(await page.locator("#chart-requests g.chart-marker[data-marker=deploy-live] title").textContent()).toMatch(/^Deploy live \d\d:\d\d UTC$/);
    expect(await page.getByRole("table").filter({ has: page.getByRole("columnheader", { name: "Event" }) }).getByRole("cell", { name: "Deploy live" }).count()).toBe(1);
    await screenshot(page, "metrics-01-last-hour");
    expect(await axeViolations(page)).toEqual([]);

    // With script, the charts are fetched again every 15 s, and keep their numbers.
    await page.locator("#chart-requests svg[data-points]").evaluate((svg) => svg.setAttribute("data-before-refresh", ""));
    await page.waitForRequest((req) => req.url() === page.url() && req.resourceType() === "fetch", { timeout: 25_000 });
    await expect.poll(() => page.locator("#chart-requests svg[data-before-refresh]").count()).toBe(0);
    expect(await page.locator("svg[role=img]").count()).toBe(4);
    const refreshed = await page.locator("#requests-title ~ details tbody tr").evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll("td"), (td) => Number((td as { textContent: string | null }).textContent))));
    expect(refreshed.reduce((n, [ok]) => n + (ok ?? 0), 0)).toBe(100);
    // The pointer over the busiest minute reads out that minute's counts, from the chart's table.
    const busiest = refreshed.reduce((best, row, i) => ((row[0] ?? 0) > (refreshed[best]![0] ?? 0) ? i : best), 0);
    const [label, ok, four, bad] = await page.locator("#requests-title ~ details tbody tr").nth(busiest).evaluate((r) => Array.from(r.querySelectorAll("th, td"), (cell) => (cell as { textContent: string | null }).textContent));
    const chart = page.locator("#chart-requests svg[data-points]");
    const at = await chart.evaluate((svg, i) => {
      // The point's place in the drawing, through the svg's transform to the screen.
      const s = svg as unknown as { dataset: Record<string, string>; getScreenCTM(): Record<"a" | "b" | "c" | "d" | "e" | "f", number> };
      const m = s.getScreenCTM();
      const [x, y] = [(i / (Number(s.dataset.points) - 1)) * Number(s.dataset.width), Number(s.dataset.height) / 2];
      return { x: m.a * x + m.c * y + m.e, y: m.b * x + m.d * y + m.f };
    }, busiest);
    await page.mouse.move(at.x, at.y);
    const readout = page.locator("#chart-requests .chart-readout");
    await expect.poll(() => readout.textContent()).toBe(`${label} UTC: 2xx ${ok}, 4xx ${four}, 5xx ${bad}`);
    expect(await readout.isVisible()).toBe(true);
    await screenshot(page, "metrics-02-readout");
    // From the keyboard: the chart takes focus, and Home reads out its first point.
    await page.mouse.move(0, 0);
    await expect.poll(() => readout.isVisible()).toBe(false);
    await chart.focus();
    await page.keyboard.press("Home");
    const first = await page.locator("#requests-title ~ details tbody tr th").first().textContent();
    await expect.poll(() => readout.textContent()).toMatch(new RegExp(`^${first} UTC: 2xx \\d+, 4xx \\d+, 5xx \\d+$`));
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole("link", { name: "7 days" }).click();
    expect(await page.locator("svg[role=img]").count()).toBe(4);
    expect(await axeViolations(page)).toEqual([]);
    expect(cspViolations).toEqual([]);
  }, 300_000);
});
