import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signedUp } from "./helpers";

describe("managed databases", () => {
  it("creates, lists, runs SQL with parameters, and deletes", async () => {
    const client = await signedUp();
    const db = await client.json("POST", "/console/api/databases", { name: "shop" });
    expect(db).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: "shop", created_at: expect.any(String) });
    expect((await client.json("GET", "/console/api/databases")).databases).toEqual([db]);

    const sql = `/console/api/databases/${db.id}/sql`;
    const created = await client.json("POST", sql, {
      sql: "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL, data BLOB); INSERT INTO items (name, price) VALUES ('a', 1.5), ('b', NULL);",
    });
    expect(created.results).toEqual([
      // DDL counts the storage's own bookkeeping writes; only the INSERT's count is ours to assert.
      { columns: [], rows: [], rows_written: expect.any(Number) },
      { columns: [], rows: [], rows_written: 2 },
    ]);
    await client.json("POST", sql, { sql: "INSERT INTO items (name, price, data) VALUES (?, ?, ?)", params: ["c'q", 2, { blob: "AAEC" }] });
    const selected = await client.json("POST", sql, { sql: "SELECT name, price, data FROM items WHERE id >= ? ORDER BY id", params: [1] });
    expect(selected.results).toEqual([
      {
        columns: ["name", "price", "data"],
        rows: [["a", 1.5, null], ["b", null, null], ["c'q", 2, { blob: "AAEC" }]],
        rows_written: 0,
      },
    ]);

    expect((await client.call("DELETE", `/console/api/databases/${db.id}`)).status).toBe(200);
    expect((await client.json("GET", "/console/api/databases")).databases).toEqual([]);
    expect((await client.call("POST", sql, { sql: "SELECT 1" })).status).toBe(404);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM databases WHERE id = ?").bind(db.id).first("n")).toBe(0);
  });

  it("returns SQLite's message as a 400 and applies nothing of a failed batch", async () => {
    const client = await signedUp();
    const db = await client.json("POST", "/console/api/databases", { name: "x" });
    const sql = `/console/api/databases/${db.id}/sql`;
    await client.json("POST", sql, { sql: "CREATE TABLE t (v INTEGER NOT NULL)" });
    const res = await client.call("POST", sql, { sql: "INSERT INTO t VALUES (1); INSERT INTO missing VALUES (2);" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ success: false, code: "INVALID_REQUEST", error: "Statement 2: no such table: missing" });
    const count = await client.json("POST", sql, { sql: "SELECT count(*) AS n FROM t" });
    expect(count.results[0].rows).toEqual([[0]]);
  });

  it("bounds the rows returned and says so", async () => {
    const client = await signedUp();
    const db = await client.json("POST", "/console/api/databases", { name: "big" });
    const sql = `/console/api/databases/${db.id}/sql`;
    const big = await client.json("POST", sql, {
      sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500) SELECT i FROM n",
    });
    expect(big.results[0].rows).toHaveLength(1000);
    expect(big.results[0].truncated).toBe(true);
  });

  it("answers another account's database exactly like a missing one", async () => {
    const owner = await signedUp();
    const stranger = await signedUp();
    const db = await owner.json("POST", "/console/api/databases", { name: "private" });
    const theirs = await stranger.call("POST", `/console/api/databases/${db.id}/sql`, { sql: "SELECT 1" });
    const missing = await stranger.call("POST", `/console/api/databases/${crypto.randomUUID()}/sql`, { sql: "SELECT 1" });
    expect(theirs.status).toBe(404);
    expect(await theirs.text()).toBe(await missing.text());
    const del = await stranger.call("DELETE", `/console/api/databases/${db.id}`);
    expect(del.status).toBe(404);
    expect((await owner.json("GET", "/console/api/databases")).databases).toHaveLength(1);
    expect((await stranger.json("GET", "/console/api/databases")).databases).toEqual([]);
  });

  it("refuses parameters with several statements, and empty SQL", async () => {
    const client = await signedUp();
    const db = await client.json("POST", "/console/api/databases", { name: "x" });
    const sql = `/console/api/databases/${db.id}/sql`;
    expect((await client.call("POST", sql, { sql: "SELECT ?; SELECT ?", params: [1] })).status).toBe(400);
    const empty = await client.call("POST", sql, { sql: "" });
    expect(empty.status).toBe(400);
    expect((await empty.json<any>()).error).toMatch(/^sql: /);
  });
});
