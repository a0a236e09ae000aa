import { describe, expect, it } from "vitest";
import { type PageClient, signedUpPage } from "./console-pages-helpers";

/**
 * The app's pages as tabs without script: each tab is a plain link with its own URL, answers 200
 * with its own section, and is the one marked aria-current="page" in the app's tab bar.
 */

let n = 0;
async function newApp(client: PageClient): Promise<string> {
  const res = await client.post("/console/apps", {
    name: "Tabbed",
    repository: "https://git.example.com/acme/tabbed",
    branch: "main",
    root_directory: "",
    dockerfile_path: "Dockerfile",
    subdomain: `tabbed-${Date.now() % 100000}-${++n}`,
    plan: "lite",
  });
  expect(res.status).toBe(303);
  return /^\/console\/apps\/([0-9a-f-]{36})$/.exec(res.headers.get("Location")!)![1]!;
}

/** The tab bar's links, as [label, href, current]. */
const tabsOf = (html: string) =>
  [...(/<nav aria-label="App" class="tabs">([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? "").matchAll(/<a id="tab-\w+" href="([^"]+)"( aria-current="page")?>([^<]+)<\/a>/g)].map((m) => [
    m[3],
    m[1],
    Boolean(m[2]),
  ]);

describe("console pages: the app's tabs", () => {
  it("answers each tab at its own URL with its section, marking it current", async () => {
    const client = await signedUpPage();
    const id = await newApp(client);
    const base = `/console/apps/${id}`;
    const tabs: [string, string, string][] = [
      ["Overview", base, 'id="controls-heading"'],
      ["Metrics", `${base}/metrics`, 'id="requests-title"'],
      ["Logs", `${base}/logs`, 'id="live-logs"'],
      ["Deploys", `${base}/deploys`, '<h2 id="deploys-heading">Deploys</h2>'],
      ["Environment", `${base}/environment`, 'id="environment-heading"'],
      ["Domains", `${base}/domains`, 'id="domains-heading"'],
      ["Settings", `${base}/settings`, 'id="settings-heading"'],
    ];
    for (const [label, path, marker] of tabs) {
      const html = await client.page(path);
      expect(tabsOf(html)).toEqual(tabs.map(([l, p]) => [l, p, l === label]));
      expect(html).toContain(marker);
      // Each section is on its own tab only.
      for (const [other, , otherMarker] of tabs) if (other !== label && other !== "Overview") expect(html).not.toContain(otherMarker);
      expect(html).toContain(`<h1>Tabbed</h1>`);
    }
    // The Overview keeps the latest deploy, with the way to the others.
    expect(await client.page(base)).toContain('<h2 id="deploys-heading">Latest deploy</h2>');
    // Another account's app: 404 on every tab.
    const stranger = await signedUpPage();
    for (const [, path] of tabs) expect((await stranger.get(path)).status).toBe(404);
  }, 30_000);
});
