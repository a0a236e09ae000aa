import { afterEach, describe, expect, it, vi } from "vitest";
import { httpdFiles, publishRepository } from "./apps-helpers";
import { type PageClient, fieldError, inputValue, signedUpPage } from "./console-pages-helpers";
import { setDns, uniqueHost } from "./domain-helpers";

// Issue 15, console: the app page's `Custom domains` section without script: add form, each domain
// with its badge (SPEC.md: `Pending DNS`, `Verifying…`, `Active`, `Error`), the reason of an Error,
// the DNS record with a copy button, last and next check with a Refresh link, Verify now, Remove
// behind a confirmation.

let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;
const flashNotice = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1];
const flashError = (html: string) => /<p class="alert" role="alert">([^<]*)<\/p>/.exec(html)?.[1];
const badge = (html: string, hostname: string) => new RegExp(`data-domain="${hostname.replace(/\./g, "\\.")}"[\\s\\S]*?data-domain-status="([^"]+)"`).exec(html)?.[1];

async function runningApp(client: PageClient, plan: string): Promise<{ id: string; subdomain: string }> {
  const repository = await publishRepository(unique("pages"), httpdFiles("<p>pages</p>"));
  const subdomain = unique("pages");
  const res = await client.post("/console/apps", { name: "Pages", repository, branch: "main", root_directory: "", dockerfile_path: "Dockerfile", subdomain, plan });
  const id = /([0-9a-f-]{36})$/.exec(res.headers.get("Location")!)![1]!;
  await client.post(`/console/apps/${id}/deploy`, {});
  const deadline = Date.now() + 20_000;
  while (((await (await client.get(`/console/api/apps/${id}`)).json()) as { status: string }).status !== "running") {
    if (Date.now() > deadline) throw new Error("deploy did not finish");
    await new Promise((r) => setTimeout(r, 100));
  }
  return { id, subdomain };
}

afterEach(() => void vi.useRealTimers());

describe("console pages: custom domains", { timeout: 30_000 }, () => {
  it("adds a domain, shows it Pending DNS with its record, Verify now gives Error with the reason, a later check Verifying…, Remove after confirming", async () => {
    const client = await signedUpPage(undefined, { credit: 100_000 });
    const { id, subdomain } = await runningApp(client, "starter");
    const empty = await client.page(`/console/apps/${id}/domains`);
    expect(empty).toContain('<h2 id="domains-heading">Custom domains</h2>');
    expect(empty).toContain("No custom domains");

    const bad = await client.post(`/console/apps/${id}/domains`, { hostname: "https://shop.example.com" });
    expect(bad.status).toBe(400);
    const badHtml = await bad.text();
    expect(fieldError(badHtml, "hostname")).toBe("Enter a hostname only, such as shop.example.com: no scheme, path, port or spaces.");
    expect(inputValue(badHtml, "f-hostname")).toBe("https://shop.example.com");

    const hostname = uniqueHost();
    const added = await client.post(`/console/apps/${id}/domains`, { hostname });
    expect(added.status).toBe(303);
    expect(added.headers.get("Location")).toBe(`/console/apps/${id}/domains`);
    const page = await client.page(`/console/apps/${id}/domains`);
    expect(flashNotice(page)).toBe(`${hostname} added. Create the DNS record shown for it; it is checked every 45 seconds.`);
    expect(badge(page, hostname)).toBe("Pending DNS");
    expect(page).toContain(`<code>CNAME</code>`);
    expect(inputValue(page, `dns-target-${hostname.replace(/[^a-z0-9]/g, "-")}`)).toBe(`${subdomain}.localhost`);
    expect(page).toMatch(/<button type="button" class="secondary" data-copy="dns-target-[^"]+" hidden="">Copy<\/button>/);
    // The TXT record that proves the claim through the shared target, with its own copy buttons.
    const slug = hostname.replace(/[^a-z0-9]/g, "-");
    expect(inputValue(page, `dns-txt-name-${slug}`)).toBe(`_cp-challenge.${hostname}`);
    expect(inputValue(page, `dns-txt-value-${slug}`)).toMatch(/^[0-9a-f]{32}$/);
    expect(page).toContain(`data-copy="dns-txt-name-${slug}"`);
    expect(page).toContain(`data-copy="dns-txt-value-${slug}"`);
    expect(page).toContain("data-countdown=");
    expect(page).toContain(`<a href="/console/apps/${id}/domains">Refresh</a>`);
    expect(page).toContain(">Verify now</button>");
    expect(page).toContain(`href="/console/apps/${id}/domains/${hostname}/remove"`);

    const verify = await client.post(`/console/apps/${id}/domains/${hostname}/verify`, {});
    expect(verify.status).toBe(303);
    const failed = await client.page(`/console/apps/${id}/domains`);
    expect(badge(failed, hostname)).toBe("Error");
    expect(flashError(failed)).toBe(`${hostname}: the check failed. The reason is shown under the domain.`);
    expect(failed).toContain(`<p class="domain-reason" role="status">${hostname} has no CNAME record; expected a CNAME to ${subdomain}.localhost</p>`);

    await setDns(hostname, [{ type: "CNAME", data: `${subdomain}.localhost` }]);
    // A second press within 10 s waits: the page says how long, and nothing is checked.
    await client.post(`/console/apps/${id}/domains/${hostname}/verify`, {});
    const early = await client.page(`/console/apps/${id}/domains`);
    expect(flashError(early)).toMatch(new RegExp(`^${hostname.replace(/\./g, "\\.")}: Verify now was pressed too often\\. Wait (10|9) seconds? before pressing it again\\.$`));
    expect(badge(early, hostname)).toBe("Error");
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 10_000);
    await client.post(`/console/apps/${id}/domains/${hostname}/verify`, {});
    const verifying = await client.page(`/console/apps/${id}/domains`);
    expect(badge(verifying, hostname)).toBe("Verifying…");
    expect(flashNotice(verifying)).toBe(`${hostname} checked: Verifying….`);
    expect(verifying).not.toContain('class="domain-reason"');

    const confirm = await client.page(`/console/apps/${id}/domains/${hostname}/remove`);
    expect(confirm).toContain(`<h1>Remove ${hostname}?</h1>`);
    expect(confirm).toContain("The app itself is not affected");
    const removed = await client.post(`/console/apps/${id}/domains/${hostname}/remove`, {});
    expect(removed.status).toBe(303);
    const after = await client.page(`/console/apps/${id}/domains`);
    expect(flashNotice(after)).toBe(`${hostname} removed. It no longer answers for this app.`);
    expect(after).not.toContain(`data-domain="${hostname}"`);
  });

  it("says under the field why a Lite app cannot have a custom domain", async () => {
    const client = await signedUpPage(undefined, { credit: 100_000 });
    const { id } = await runningApp(client, "lite");
    const page = await client.page(`/console/apps/${id}/domains`);
    expect(page).toContain('<p class="hint">Custom domains are available on the Starter plan and above.</p>');
    const res = await client.post(`/console/apps/${id}/domains`, { hostname: uniqueHost() });
    expect(res.status).toBe(403);
    expect(fieldError(await res.text(), "hostname")).toBe("Custom domains are available on the Starter plan and above.");
  });
});
