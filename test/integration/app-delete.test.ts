import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { packTar } from "modern-tar";
import { describe, expect, it } from "vitest";
import { APP_ID_LABEL, appImageRepository } from "../../src/apps/launch";
import { database } from "../../src/db/client";
import { apps } from "../../src/db/schema";
import { DockerRuntime } from "../../src/runtime";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

// SPEC.md, App controls: "Delete: instance, image, logs and record removed". Delete removes what
// the engine holds for the app, not only what the records name: an instance whose removal after
// a switch never ran (the job or the controller was interrupted while it drained) and an image of
// the app that no deploy record names are gone too. The engine is the fake Docker Engine at its
// HTTP boundary.

describe("Delete", () => {
  it("removes every instance and image the engine holds for the app, including ones no record names", async () => {
    const client = await signedUpClient();
    const files = httpdFiles("<p>delete me</p>");
    const repository = await publishRepository(`delete-${Date.now() % 100000}`, files);
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Leaky", repository });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    expect((await waitForDeploy(client, app.id)).status).toBe("running");
    const row = (await database(env).select().from(apps).where(eq(apps.id, app.id)).get())!;

    const runtime = new DockerRuntime({ url: env.RUNTIME_URL });
    const labels = { [APP_ID_LABEL]: app.id };
    // An older instance of the same image still running, as when its removal after a switch never ran.
    const lost = await runtime.start({ image: row.image!, name: `lost-${app.id.slice(0, 8)}`, labels, env: {}, port: 8080, limits: { memoryBytes: 64 * 1024 * 1024, cpus: 0.5 } });
    // An image of the app that no deploy record names.
    const strayTag = `${appImageRepository(app.id)}:stray`;
    const context = await packTar(Object.entries(files).map(([name, body]) => ({ header: { name, size: new TextEncoder().encode(body).length, mode: 0o644 }, body })));
    expect((await runtime.build({ context: new Blob([context]).stream(), dockerfile: "Dockerfile", tag: strayTag })).ok).toBe(true);
    expect((await runtime.instances(labels)).sort()).toEqual([row.instanceId!, lost.id].sort());
    expect((await runtime.images(appImageRepository(app.id))).sort()).toEqual([row.image!, strayTag].sort());

    expect((await client.call("DELETE", `/console/api/apps/${app.id}`)).status).toBe(200);
    expect(await runtime.instances(labels)).toEqual([]);
    expect(await runtime.inspect(lost.id)).toBeNull();
    expect(await runtime.images(appImageRepository(app.id))).toEqual([]);
    expect(await runtime.hasImage(row.image!)).toBe(false);
    expect(await runtime.hasImage(strayTag)).toBe(false);
  }, 30_000);
});
