import { afterEach, beforeEach, expect, it } from "vitest";
import { clockedApp, envWith, exportIdOf, exportRows, recordExportJobs } from "./api-helpers";
import { accountWithToken } from "./helpers";

// ARCHITECTURE.md invariant: exactly one export starts per database however many start requests race.

let jobs: ReturnType<typeof recordExportJobs>;
beforeEach(() => {
  jobs = recordExportJobs({ deliver: false });
});
afterEach(() => jobs.restore());

it("starts exactly one export when 50 start requests race", async () => {
  const { token, databaseId } = await accountWithToken();
  const app = clockedApp();
  // A burst above 50 so the call-rate limit stays out of the way: this test is about the gate.
  const bindings = envWith({ RATE_LIMIT_BURST: "100" });

  const replies = await Promise.all(Array.from({ length: 50 }, () => app.startExport(token, databaseId, bindings)));
  const bodies = await Promise.all(replies.map((r) => r.json<{ url?: string; code?: string }>()));

  const accepted = bodies.filter((_, i) => replies[i]!.status === 200);
  const refused = bodies.filter((_, i) => replies[i]!.status === 429);
  expect(accepted).toHaveLength(1);
  expect(refused).toHaveLength(49);
  expect(new Set(refused.map((b) => b.code))).toEqual(new Set(["export_in_flight"]));
  for (const [i, reply] of replies.entries()) if (reply.status === 429) expect(reply.headers.get("Retry-After"), `reply ${i}`).toMatch(/^\d+$/);

  const exportId = exportIdOf(accepted[0]!.url!);
  expect(await exportRows(databaseId)).toEqual([expect.objectContaining({ id: exportId, status: "pending" })]);
  expect(jobs.sent).toEqual([{ exportId, databaseId }]);
});
