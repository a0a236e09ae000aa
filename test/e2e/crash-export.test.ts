import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_EMAIL, DEMO_PASSWORD, seedDemo } from "../../scripts/lib/seed";
import { RUNNER_SILENCE_MS } from "../../src/exports/runner-watch";
import { type CrashableWorker, startCrashableWorker } from "./crash-harness";
import { ConsoleSession, download, pollUntilReady, sha256, startExport } from "./export-helpers";
import { localD1Rows } from "./harness";

// Exports after a crash: the whole `wrangler dev` (wrangler, workerd, the local queue's messages)
// is killed with SIGKILL during an export, then started again on the same local state. The link
// ends in the archive (the same bytes as an export of the same data without a crash) or 404, never
// 503 for ever, and the database is not held `export_in_flight` by the dead export.

const MiB = 1024 * 1024;
/** 32 MiB of random blobs: about 64 MiB of SQL, several seconds of export. */
const FILL = `CREATE TABLE noise (id INTEGER PRIMARY KEY, bytes BLOB);
  WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 128)
  INSERT INTO noise SELECT x, randomblob(262144) FROM n;`;

interface ExportState {
  status: string;
  step: number;
  aliveAt: number;
}

async function exportState(worker: CrashableWorker, exportId: string): Promise<ExportState | null> {
  const [row] = await localD1Rows(worker.persistTo, `SELECT status, step, coalesce(runner_alive_at, 0) FROM exports WHERE id = '${exportId}'`);
  return row ? { status: row[0]!, step: Number(row[1]), aliveAt: Number(row[2]) } : null;
}

const exportIdOf = (url: string) => /\/exports\/([0-9a-f-]{36})\/download/.exec(url)![1]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("an export when the whole service is killed", () => {
  let worker: CrashableWorker;
  beforeAll(async () => {
    // 16 MiB of SQL per invocation: the export stores checkpoints as it goes. No cooldown, so the
    // reference export does not hold the next start back.
    worker = await startCrashableWorker({ EXPORT_INVOCATION_BYTES: String(16 * MiB), EXPORT_COOLDOWN_SECONDS: "0", PENDING_RETRY_AFTER_SECONDS: "1" });
  }, 300_000);
  afterAll(async () => {
    await worker?.stop();
  });

  it("ends with the archive (or 404, then a new start works) after a SIGKILL mid-export and a restart", async () => {
    const demo = await seedDemo(worker.url);
    const session = new ConsoleSession(worker.url);
    await session.call("POST", "/console/api/login", { email: DEMO_EMAIL, password: DEMO_PASSWORD });
    await session.sql(demo.databaseId, FILL);

    // The same data exported without a crash: the archive every later export must match.
    const reference = await startExport(worker.url, demo.token, demo.databaseId);
    expect((await pollUntilReady(reference, 120_000)).status).toBe(200);
    const expected = sha256((await download(reference)).body);

    const url = await startExport(worker.url, demo.token, demo.databaseId);
    const exportId = exportIdOf(url);
    // Killed once the export has stored a checkpoint and is still running.
    const deadline = Date.now() + 60_000;
    let before: ExportState | null = null;
    while (!(before && before.status === "running" && before.step >= 1)) {
      if (Date.now() > deadline) throw new Error(`the export never reached a checkpoint while running: ${JSON.stringify(before)}`);
      before = await exportState(worker, exportId);
      expect(before?.status).not.toBe("ready");
      await sleep(50);
    }
    await worker.kill();
    const killedAt = Date.now();
    await worker.restart();
    const restartedAt = Date.now();

    // The link: 503 while the export is prepared, then 200 or 404, within about two minutes of the crash.
    let answer: Response | undefined;
    while (!answer) {
      const res = await fetch(url, { method: "HEAD" });
      if (res.status !== 503) answer = res;
      else {
        const now = Date.now();
        // Never held by a dead runner: a minute after the restart, whoever holds the export is alive.
        if (now - restartedAt > RUNNER_SILENCE_MS + 5_000) {
          const state = await exportState(worker, exportId);
          expect(now - state!.aliveAt, `export ${exportId} held by a runner silent since ${state!.aliveAt}`).toBeLessThan(RUNNER_SILENCE_MS + 5_000);
        }
        expect(now - killedAt, "the link still answers 503 two minutes after the crash").toBeLessThan(125_000);
        await sleep(1000);
      }
    }

    console.info(`crash-export: killed at step ${before.step}; the link answered ${answer.status} ${Math.round((Date.now() - killedAt) / 1000)} s after the kill, ${Math.round((Date.now() - restartedAt) / 1000)} s after the restart`);
    if (answer.status === 200) {
      const { res, body } = await download(url);
      expect(res.status).toBe(200);
      expect(sha256(body)).toBe(res.headers.get("X-Export-SHA256"));
      expect(sha256(body)).toBe(expected);
      // It went on from its checkpoint: the dump did not start over.
      expect(worker.output()).not.toContain("the dump starts over");
    } else {
      expect(answer.status).toBe(404);
    }
    // The database is free: a new export starts.
    await startExport(worker.url, demo.token, demo.databaseId);
  }, 300_000);
});
