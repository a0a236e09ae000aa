import { exports as workerExports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

// docs/metrics.md: every answer the proxy passes counts toward its app's minute (status class,
// time to headers, bytes out), and `GET /console/api/apps/{id}/metrics` reads them back, one
// point per step. The engine is the fake Docker Engine at its HTTP boundary; the Worker tests
// write counts at once (METRICS_FLUSH_SECONDS=0).

interface MetricsJson {
  from: string;
  to: string;
  step_seconds: number;
  memory_limit_bytes: number;
  cpu_limit: number;
  points: { at: string; requests: Record<"2xx" | "3xx" | "4xx" | "5xx", number>; latency_ms: { p50: number; p95: number } | null; bytes_out: number; restarts: number }[];
}

const total = (m: MetricsJson, cls: "2xx" | "3xx" | "4xx" | "5xx") => m.points.reduce((n, p) => n + p.requests[cls], 0);

describe("app metrics", () => {
  it("counts each answer by status class with its response time and bytes, for the app's owner only", async () => {
    const client = await signedUpClient();
    const files = { ...httpdFiles("<p>counted</p>"), "www/cgi-bin/fail": '#!/bin/sh\necho "Status: 500 Internal Server Error"\necho "Content-Type: text/plain"\necho ""\necho "broken"\n' };
    const repository = await publishRepository(`metrics-${Date.now() % 100000}`, files);
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Counted", repository });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    await waitForDeploy(client, app.id);
    const get = (path: string) => workerExports.default.fetch(new Request(`http://${app.subdomain}.localhost${path}`));

    for (let i = 0; i < 10; i++) expect((await get("/")).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await get("/cgi-bin/fail")).status).toBe(500);
    expect((await get("/missing")).status).toBe(404);

    let metrics: MetricsJson | undefined;
    for (let i = 0; i < 50; i++) {
      metrics = await client.json<MetricsJson>("GET", `/console/api/apps/${app.id}/metrics`);
      if (total(metrics, "2xx") + total(metrics, "4xx") + total(metrics, "5xx") >= 14) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(metrics!.step_seconds).toBe(60);
    expect(metrics!.points).toHaveLength(60);
    expect([total(metrics!, "2xx"), total(metrics!, "3xx"), total(metrics!, "4xx"), total(metrics!, "5xx")]).toEqual([10, 0, 1, 3]);
    const busy = metrics!.points.filter((p) => p.requests["2xx"] > 0);
    expect(busy.every((p) => p.latency_ms !== null && p.latency_ms.p50 >= 1 && p.latency_ms.p95 >= p.latency_ms.p50)).toBe(true);
    expect(metrics!.points.reduce((n, p) => n + p.bytes_out, 0)).toBeGreaterThanOrEqual(10 * "<p>counted</p>".length);
    expect([metrics!.memory_limit_bytes, metrics!.cpu_limit]).toEqual([256 * 1024 * 1024, 0.25]);

    // Hourly points over a day.
    const daily = await client.json<MetricsJson>("GET", `/console/api/apps/${app.id}/metrics?step=3600`);
    expect([daily.points.length, total(daily, "2xx"), total(daily, "5xx")]).toEqual([24, 10, 3]);

    // The Metrics page draws four charts on the server, each with its numbers as a table.
    const page = await client.call("GET", `/console/apps/${app.id}/metrics?range=24h`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html.match(/<svg[^>]*role="img"/g)).toHaveLength(4);
    expect(html).toContain("Requests by status");
    // The deploy that just went live is marked on each chart, with a legend entry, and listed under the charts.
    const minute = new Date(Date.now()).toISOString().slice(5, 16).replace("T", " ");
    const earlier = new Date(Date.now() - 60_000).toISOString().slice(5, 16).replace("T", " ");
    expect(html.match(/<g class="chart-marker" data-marker="deploy-live"><title>Deploy live [0-9-]+ [0-9:]+ UTC<\/title>/g)).toHaveLength(4);
    expect(html.match(/data-marker-legend="deploy-live"/g)).toHaveLength(4);
    expect(html).toMatch(new RegExp(`<tr data-marker="deploy-live"><td>(${minute}|${earlier}) UTC</td><td>Deploy live</td></tr>`));
    expect(html).not.toContain('data-marker="deploy-failed"');
    const hour = await (await client.call("GET", `/console/apps/${app.id}/metrics`)).text();
    expect(hour.match(/<g class="chart-marker" data-marker="deploy-live"><title>Deploy live \d\d:\d\d UTC<\/title>/g)).toHaveLength(4);

    // Another account sees nothing: the same 404 as an app that does not exist.
    const stranger = await signedUpClient();
    expect((await stranger.call("GET", `/console/api/apps/${app.id}/metrics`)).status).toBe(404);
    expect((await stranger.call("GET", `/console/apps/${app.id}/metrics`)).status).toBe(404);
  }, 60_000);

  it.each([
    ["step=5", "step"],
    ["from=tomorrow", "from"],
    ["to=2027-99-99", "to"],
    ["from=1800000000&to=1700000000", "from"],
    ["from=1000000000&to=1800000000", "from"],
  ])("answers 400 INVALID_REQUEST naming the parameter for ?%s", async (query, field) => {
    const client = await signedUpClient();
    const repository = await publishRepository(`metrics-q-${Date.now() % 100000}`, httpdFiles("<p>q</p>"));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Query", repository });
    const res = await client.call("GET", `/console/api/apps/${app.id}/metrics?${query}`);
    const body = (await res.json()) as { code: string; error: string; field: string };
    expect([res.status, body.code, body.field]).toEqual([400, "INVALID_REQUEST", field]);
    expect(body.error.startsWith(`${field}:`)).toBe(true);
  });
});
