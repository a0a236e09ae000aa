import { createMessageBatch } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { handleExportBatch } from "../../src/exports/job";
import { deadlineFor, EXPORT_DLQ } from "../../src/exports/job-limits";
import { stagingKey } from "../../src/exports/store";
import { runSweep } from "../../src/exports/sweep";
import { clockedApp, exportIdOf, exportRows, recordExportJobs } from "./api-helpers";
import { downloadClient, linkFor } from "./download-helpers";
import { exportRow, T0 } from "./export-helpers";
import { accountWithToken } from "./helpers";

// Issue 16: no export stuck forever. Past its deadline an export is failed (404), its objects are
// deleted, and a new export can start; the gate and the periodic sweep both apply the rule.

const DEADLINE = deadlineFor(T0);
const RETENTION = Number(env.ARCHIVE_RETENTION_SECONDS);

let jobs: ReturnType<typeof recordExportJobs>;
beforeEach(() => {
  // The message is never delivered: the record was inserted, then the isolate died.
  jobs = recordExportJobs({ deliver: false });
});
afterEach(() => jobs.restore());

/** An accepted export whose message never reached the consumer, with a staged leftover. */
async function strandedExport() {
  const { token, databaseId } = await accountWithToken();
  const app = clockedApp(T0);
  const res = await app.startExport(token, databaseId);
  expect(res.status).toBe(200);
  const exportId = exportIdOf((await res.json<{ url: string }>()).url);
  const key = `exports/${databaseId}/${exportId}.sql.gz`;
  await env.ARCHIVES.put(stagingKey(key), "half an archive");
  return { app, token, databaseId, exportId, key };
}

describe("export deadline", () => {
  it("the gate fails an export stranded between its record and its message once the deadline passes", async () => {
    const { app, token, databaseId, exportId, key } = await strandedExport();
    // A link that outlives the deadline (the default one expires first).
    const url = await linkFor(databaseId, exportId, T0, 3 * 3600);
    app.clock.now = DEADLINE - 1;
    expect(await (await app.startExport(token, databaseId)).json()).toMatchObject({ code: "export_in_flight" });
    const client = downloadClient(env, DEADLINE - 1);
    expect((await client.ask(url)).res.status).toBe(503);

    client.clock.now = DEADLINE;
    // The link answers 404 from the deadline on, before anything rewrote the record.
    expect((await client.ask(url)).json()).toMatchObject({ code: "NOT_FOUND" });
    app.clock.now = DEADLINE;
    expect((await app.startExport(token, databaseId)).status).toBe(200);
    expect(await exportRow(exportId)).toMatchObject({ status: "failed", finished_at: DEADLINE });
    expect(await env.ARCHIVES.head(stagingKey(key))).toBeNull();
    expect((await exportRows(databaseId)).map((r) => r.status)).toEqual(["failed", "pending"]);
  });

  it("the sweep fails it and removes its staged object, leaving exports within their deadline alone", async () => {
    const stranded = await strandedExport();
    const young = await accountWithToken();
    const youngStart = clockedApp(T0 + 1000);
    expect((await youngStart.startExport(young.token, young.databaseId)).status).toBe(200);

    await runSweep(env, DEADLINE - 1, RETENTION);
    expect(await exportRow(stranded.exportId)).toMatchObject({ status: "pending" });
    await runSweep(env, DEADLINE, RETENTION);
    expect(await exportRow(stranded.exportId)).toMatchObject({ status: "failed" });
    expect(await env.ARCHIVES.head(stagingKey(stranded.key))).toBeNull();
    expect((await exportRows(young.databaseId)).map((r) => r.status)).toEqual(["pending"]);
    stranded.app.clock.now = DEADLINE;
    expect((await stranded.app.startExport(stranded.token, stranded.databaseId)).status).toBe(200);
  });

  it("an export whose dead-letter consumer threw is failed by the sweep at its deadline", async () => {
    const { app, token, databaseId, exportId } = await strandedExport();
    const broken = { ...env, DB: { prepare: () => { throw new Error("D1 unavailable"); } } } as unknown as Env;
    const batch = createMessageBatch(EXPORT_DLQ, [{ id: crypto.randomUUID(), timestamp: new Date(T0), attempts: 1, body: jobs.sent[0] }]);
    await expect(handleExportBatch(batch, broken, { now: () => T0 + 60_000 })).rejects.toThrow();
    expect(await exportRow(exportId)).toMatchObject({ status: "pending" });

    await runSweep(env, DEADLINE, RETENTION);
    expect(await exportRow(exportId)).toMatchObject({ status: "failed" });
    app.clock.now = DEADLINE;
    expect((await app.startExport(token, databaseId)).status).toBe(200);
  });

  it("a job delivered after the deadline does nothing", async () => {
    const { exportId } = await strandedExport();
    const batch = createMessageBatch("export-jobs", [{ id: crypto.randomUUID(), timestamp: new Date(T0), attempts: 1, body: jobs.sent[0] }]);
    await handleExportBatch(batch, env, { now: () => DEADLINE });
    expect(await exportRow(exportId)).toMatchObject({ status: "pending", started_at: null });
  });
});
