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

it("starts exactly one export per database when starts of several databases of one account race", async () => {
  const { client, token, databaseId } = await accountWithToken();
  const others = await Promise.all([1, 2, 3].map((i) => client.json<{ id: string }>("POST", "/console/api/databases", { name: `db${i}` })));
  const ids = [databaseId, ...others.map((d) => d.id)];
  const app = clockedApp();
  const bindings = envWith({ RATE_LIMIT_BURST: "100" });

  // 12 starts for each of the four databases, interleaved: each database has exactly one started.
  const targets = Array.from({ length: 48 }, (_, i) => ids[i % ids.length]!);
  const replies = await Promise.all(targets.map((id) => app.startExport(token, id, bindings)));
  const bodies = await Promise.all(replies.map((r) => r.json<{ url?: string; code?: string }>()));

  for (const id of ids) {
    const mine = bodies.filter((_, i) => targets[i] === id);
    const accepted = mine.filter((b) => b.url);
    expect(accepted, id).toHaveLength(1);
    expect(mine.filter((b) => b.code === "export_in_flight"), id).toHaveLength(11);
    expect(await exportRows(id)).toEqual([expect.objectContaining({ id: exportIdOf(accepted[0]!.url!), status: "pending" })]);
  }
  expect(new Set(jobs.sent.map((m) => m.databaseId))).toEqual(new Set(ids));
  expect(jobs.sent).toHaveLength(ids.length);
});
