import { exports as workerExports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { httpdFiles, publishCommit, publishRepository } from "./apps-helpers";
import { type PageClient, signedUpPage } from "./console-pages-helpers";

/**
 * The app page's deploy history without script: each deploy's commit, image digest, plan and env
 * version; a Rollback button on each deploy whose image is kept (not on the live one), posting a
 * form with the CSRF rules of every console POST and coming back with a flash, as other controls do.
 */

const SHA = "abcdefabcdefabcdefabcdefabcdefabcdefabcd";

async function createApp(client: PageClient, form: Record<string, string>): Promise<string> {
  const res = await client.post("/console/apps", { branch: "main", root_directory: "", dockerfile_path: "Dockerfile", subdomain: "", plan: "lite", ...form });
  expect(res.status).toBe(303);
  return /^\/console\/apps\/([0-9a-f-]{36})$/.exec(res.headers.get("Location")!)![1]!;
}

async function deployAndWait(client: PageClient, id: string): Promise<void> {
  expect((await client.post(`/console/apps/${id}/deploy`, {})).status).toBe(303);
  for (let i = 0; i < 300; i++) {
    const app = (await (await client.get(`/console/api/apps/${id}`)).json()) as { deploy_in_progress: boolean };
    if (!app.deploy_in_progress) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("deploy still running");
}

const rowOf = (html: string, deployId: string) => new RegExp(`<tr data-deploy-id="${deployId}"[\\s\\S]*?</tr>`).exec(html)?.[0] ?? "";
const flashNotice = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1];
const flashError = (html: string) => /<p class="alert" role="alert">([^<]*)<\/p>/.exec(html)?.[1];

describe("console pages: deploy history and rollback", () => {
  it("shows commit, image, plan and env version; Rollback on a kept deploy switches back with a flash", async () => {
    const client = await signedUpPage(undefined, { credit: 100_000 });
    const name = `hist-${crypto.randomUUID().slice(0, 8)}`;
    const repository = await publishRepository(name, httpdFiles("<p>first</p>"));
    await publishCommit(name, { sha: SHA, message: "First page <b>bold</b>\n\nDetails" });
    const id = await createApp(client, { name: "hist", repository });
    await deployAndWait(client, id);
    await publishRepository(name, httpdFiles("<p>second</p>"));
    await publishCommit(name, { sha: SHA.replaceAll("a", "1"), message: "Second page" });
    await deployAndWait(client, id);

    const deploys = ((await (await client.get(`/console/api/apps/${id}/deploys`)).json()) as { deploys: { id: string; image_digest: string }[] }).deploys;
    const [live, first] = deploys;
    const page = await client.page(`/console/apps/${id}/deploys`);
    const firstRow = rowOf(page, first!.id);
    expect(firstRow).toContain(`<code title="${SHA}">abcdefa</code> First page &lt;b&gt;bold&lt;/b&gt;`);
    expect(firstRow).toContain(`image <code title="${first!.image_digest}">${first!.image_digest.slice(7, 19)}</code> · Lite · env v0`);
    expect(firstRow).toContain(`action="/console/apps/${id}/deploys/${first!.id}/rollback"`);
    expect(firstRow).toContain(`aria-label="Roll back to deploy ${first!.id.slice(0, 8)}">Rollback</button>`);
    expect(firstRow).toMatch(/<input type="hidden" name="_csrf" value="[^"]+"/);
    // The live deploy has no Rollback.
    expect(rowOf(page, live!.id)).not.toContain("Rollback</button>");

    // A cross-site form post is refused before anything runs.
    const forged = await client.post(`/console/apps/${id}/deploys/${first!.id}/rollback`, {}, { Origin: "https://evil.example" });
    expect(forged.status).toBe(403);

    const res = await client.post(`/console/apps/${id}/deploys/${first!.id}/rollback`, {});
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe(`/console/apps/${id}`);
    const after = await client.page(`/console/apps/${id}`);
    expect(flashNotice(after)).toBe(`Rolling back to deploy ${first!.id.slice(0, 8)}: no rebuild. Its log is under Deploys.`);
    expect(after).toContain(`data-deploy-kind="rollback"`);
    expect(after).toContain(`rollback of ${first!.id.slice(0, 8)}</span>`);
    for (let i = 0; i < 300; i++) {
      const app = (await (await client.get(`/console/api/apps/${id}`)).json()) as { deploy_in_progress: boolean };
      if (!app.deploy_in_progress) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const served = await workerExports.default.fetch(new Request(`http://${(await (await client.get(`/console/api/apps/${id}`)).json() as { subdomain: string }).subdomain}.localhost/`));
    expect(await served.text()).toBe("<p>first</p>");

    // The deploy now live (the rollback) has no button; the one it replaced has.
    const now = await client.page(`/console/apps/${id}/deploys`);
    expect(rowOf(now, live!.id)).toContain("Rollback</button>");
    expect(rowOf(now, first!.id)).toContain("Rollback</button>");
    // Rolling back to a deploy whose image is the live one's again is fine; to the live deploy is refused with its sentence.
    const rollbackId = /<tr data-deploy-id="([0-9a-f-]{36})" data-deploy-kind="rollback"/.exec(now)![1]!;
    await client.post(`/console/apps/${id}/deploys/${rollbackId}/rollback`, {});
    expect(flashError(await client.page(`/console/apps/${id}`))).toBe("This deploy is the one the app runs now.");
    await client.post(`/console/apps/${id}/delete`, {});
  }, 60_000);
});
