import { describe, expect, it } from "vitest";
import { httpdFiles, publishRepository } from "./apps-helpers";
import { PageClient, signedUpPage } from "./console-pages-helpers";

/**
 * Issue 13, "Where it shows": the Billing page (balance, ledger) and the app page's billing lines,
 * as a browser without script sees them. Deploys run on the fake engine and forge.
 */

const unescape = (html: string) => html.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
const text = (html: string, attr: string) =>
  unescape(new RegExp(`<[^>]+data-billing="${attr}"[^>]*>([\\s\\S]*?)</(?:p|li|dd|span)>`).exec(html)?.[1]?.replace(/<[^>]+>/g, "").replace(/\s+/g, " ").trim() ?? "");

async function deployedApp(client: PageClient): Promise<string> {
  const repository = await publishRepository(`billing-page-${Date.now() % 100000}`, httpdFiles("<p>billed</p>"));
  const res = await client.post("/console/apps", { name: "Paid", repository, branch: "main", root_directory: "", dockerfile_path: "Dockerfile", subdomain: "", plan: "lite" });
  const id = /\/console\/apps\/([0-9a-f-]{36})$/.exec(res.headers.get("Location")!)![1]!;
  const before = await client.page(`/console/apps/${id}`);
  expect(text(before, "deploy")).toBe("Deploy: Deploy charges 1,200 DA now for the first month of the Lite plan, before the build starts.");
  expect(text(before, "summary")).toBe("Not charged yet. The first deploy charges 1,200 DA for a month of the Lite plan. Wallet");
  expect((await client.post(`/console/apps/${id}/deploy`, {})).status).toBe(303);
  const deadline = Date.now() + 20_000;
  while (((await (await client.get(`/console/api/apps/${id}`)).json()) as { deploy_in_progress: boolean }).deploy_in_progress) {
    if (Date.now() > deadline) throw new Error("deploy still running");
    await new Promise((r) => setTimeout(r, 100));
  }
  return id;
}

describe("console pages: billing", () => {
  it("sends a signed-out visitor to sign in, and shows an empty wallet", async () => {
    const res = await new PageClient().get("/console/billing");
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe(`/console/signin?next=${encodeURIComponent("/console/billing")}`);
    const html = await (await signedUpPage()).page("/console/billing");
    expect(html).toContain('data-balance="0"');
    expect(html).toContain("No entries yet");
    expect(html).toContain('<a href="/console/billing" aria-current="page">Billing</a>');
  });

  it("shows the app's billing lines after the first deploy, and the charge and credit on the Billing page", async () => {
    const client = await signedUpPage(undefined, { credit: 2000 });
    const id = await deployedApp(client);
    const page = await client.page(`/console/apps/${id}`);
    expect(text(page, "summary")).toMatch(/^1,200 DA paid for the period \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d; it renews then at 1,200 DA\. Wallet$/);
    expect(text(page, "deploy")).toBe("Redeploy: Redeploy charges nothing.");
    expect(text(page, "restart")).toBe("Restart: Restart charges nothing.");
    expect(text(page, "plan")).toMatch(/^Nothing is charged or refunded now; the new plan's price applies from the next billing cycle, on \d{4}-\d\d-\d\d\.$/);
    expect(text(await client.page(`/console/apps/${id}/delete`), "delete")).toMatch(/^Billing ends at once\. The paid remainder \(until \d{4}-\d\d-\d\d\) is not refunded\.$/);

    const billing = await client.page("/console/billing");
    expect(billing).toContain('data-balance="800"');
    expect(billing).toContain("<strong>800 DA</strong>");
    const rows = [...billing.matchAll(/<tr data-entry-kind="(\w+)">([\s\S]*?)<\/tr>/g)].map((m) => [m[1], m[2]!.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim()]);
    expect(rows).toHaveLength(2);
    expect(rows[0]![0]).toBe("charge");
    expect(rows[0]![1]).toContain("First month of the Lite plan Paid");
    expect(rows[0]![1]).toMatch(/−1,200 DA$/);
    expect(rows[1]![0]).toBe("credit");
    expect(rows[1]![1]).toMatch(/Test credit — — \+2,000 DA$/);
  });

  it("shows a refused first deploy's sentence as the flash, with nothing charged", async () => {
    const client = await signedUpPage(undefined, { credit: 100 });
    const repository = await publishRepository(`billing-poor-${Date.now() % 100000}`, httpdFiles("<p>poor</p>"));
    const res = await client.post("/console/apps", { name: "Poor", repository, branch: "main", root_directory: "", dockerfile_path: "Dockerfile", subdomain: "", plan: "lite" });
    const path = res.headers.get("Location")!;
    await client.page(path);
    expect((await client.post(`${path}/deploy`, {})).status).toBe(303);
    const page = await client.page(path);
    expect(page).toContain('<p class="alert" role="alert">Your wallet holds 100 DA; the first month of the Lite plan costs 1,200 DA.</p>');
    expect(page).toContain(">Deploy</button>");
    expect(await client.page("/console/billing")).toContain('data-balance="100"');
  });
});
