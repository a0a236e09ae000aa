import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { isPastRetention } from "../../src/exports/export-state";
import { sweepExpiredArchives } from "../../src/exports/retention";
import { STORE_BATCH } from "../../src/exports/store";
import { T0, deliver, exportRow, pendingExport } from "./export-helpers";

const RETENTION = 3600;
/** The job in export-helpers finishes at this time. */
const READY_AT = T0 + 60_000;

describe("isPastRetention", () => {
  it.each([
    ["just before the end", READY_AT + RETENTION * 1000 - 1, false],
    ["exactly at the end", READY_AT + RETENTION * 1000, true],
    ["after the end", READY_AT + RETENTION * 1000 + 1, true],
    ["at the ready time", READY_AT, false],
  ])("%s", (_name, now, expected) => {
    expect(isPastRetention(READY_AT, RETENTION, now)).toBe(expected);
  });
});

describe("retention sweep", () => {
  it("expires ready exports past retention and deletes their archives, leaving younger ones", async () => {
    const old = await pendingExport("CREATE TABLE t (a);");
    await deliver(old.job);
    const young = await pendingExport("CREATE TABLE t (a);");
    await deliver(young.job, 1, { now: () => READY_AT + 1000 });

    expect(await sweepExpiredArchives(env, RETENTION, READY_AT + RETENTION * 1000 - 1)).toBe(0);
    expect(await exportRow(old.exportId)).toMatchObject({ status: "ready" });

    expect(await sweepExpiredArchives(env, RETENTION, READY_AT + RETENTION * 1000)).toBeGreaterThanOrEqual(1);
    expect(await exportRow(old.exportId)).toMatchObject({ status: "expired" });
    expect(await env.ARCHIVES.head(old.key)).toBeNull();
    expect(await exportRow(young.exportId)).toMatchObject({ status: "ready" });
    expect(await env.ARCHIVES.head(young.key)).not.toBeNull();
  });

  it("works through more exports than one batch holds", async () => {
    const { databaseId } = await pendingExport();
    const ids = Array.from({ length: STORE_BATCH + 5 }, () => crypto.randomUUID());
    await env.DB.batch(
      ids.map((id) =>
        env.DB.prepare("INSERT INTO exports (id, database_id, status, created_at, finished_at, size_bytes, sha256) VALUES (?, ?, 'ready', 1, 2, 1, 'x')").bind(id, databaseId),
      ),
    );
    await sweepExpiredArchives(env, RETENTION, T0);
    const { results } = await env.DB.prepare("SELECT status, count(*) AS n FROM exports WHERE database_id = ? GROUP BY status ORDER BY status")
      .bind(databaseId)
      .all();
    expect(results).toEqual([{ status: "expired", n: ids.length }, { status: "pending", n: 1 }]);
  });

  it("runs from the Worker's cron trigger", async () => {
    const { exportId, key } = await pendingExport();
    await env.DB.prepare("UPDATE exports SET status = 'ready', finished_at = 0, size_bytes = 1, sha256 = 'x' WHERE id = ?").bind(exportId).run();
    await env.ARCHIVES.put(key, "x");
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);
    await waitOnExecutionContext(ctx);
    expect(await exportRow(exportId)).toMatchObject({ status: "expired" });
    expect(await env.ARCHIVES.head(key)).toBeNull();
  });
});
