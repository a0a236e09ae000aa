import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { KEPT_ARCHIVE_MAX_BYTES, KeptArchives } from "../../src/exports/kept-archives";
import { sha256Of } from "./export-helpers";
import { downloadClient, readyExport } from "./download-helpers";

/**
 * Small ready archives served from the isolate's memory (src/exports/kept-archives.ts): every poll
 * still asks R2 whether the object is there and the same, none reads its bytes again, and nothing
 * that may no longer be served is served from memory.
 */

/** The test's R2 bucket with every call counted by method. */
function countingBucket() {
  const calls = { get: 0, head: 0 };
  const bucket = new Proxy(env.ARCHIVES, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name !== "get" && name !== "head") return typeof value === "function" ? value.bind(target) : value;
      return (...args: unknown[]) => {
        calls[name]++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { calls, bindings: { ...env, ARCHIVES: bucket } as Env };
}

/** An archive larger than KEPT_ARCHIVE_MAX_BYTES: random bytes do not compress. */
const LARGE = `CREATE TABLE t (v BLOB);
  WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 4) INSERT INTO t SELECT randomblob(${KEPT_ARCHIVE_MAX_BYTES}) FROM n;`;

describe("download: small archives kept in memory", () => {
  it("reads a small archive's bytes once, then only heads the object, serving the same bytes every time", async () => {
    const { url, archive } = await readyExport();
    const { calls, bindings } = countingBucket();
    const client = downloadClient(bindings);
    for (let i = 0; i < 3; i++) {
      const { res, body } = await client.ask(url);
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Length")).toBe(String(archive.byteLength));
      expect(body).toEqual(archive);
      expect(await sha256Of(body)).toBe(res.headers.get("X-Export-SHA256"));
    }
    expect(calls).toEqual({ get: 1, head: 2 });
  });

  it("reads an archive over the bound from R2 on every poll", async () => {
    const { url, archive } = await readyExport(LARGE);
    expect(archive.byteLength).toBeGreaterThan(KEPT_ARCHIVE_MAX_BYTES);
    const { calls, bindings } = countingBucket();
    const client = downloadClient(bindings);
    for (let i = 0; i < 2; i++) expect((await client.ask(url)).body).toEqual(archive);
    expect(calls.get).toBe(2);
  });

  it("answers 500, not the kept bytes, once the object is gone", async () => {
    const { url, key } = await readyExport();
    const client = downloadClient();
    expect((await client.ask(url)).res.status).toBe(200);
    await env.ARCHIVES.delete(key);
    const reply = await client.ask(url);
    expect(reply.res.status).toBe(500);
    expect(reply.json()).toEqual({ success: false, error: expect.any(String), code: "INTERNAL_ERROR" });
  });

  it("answers 500 when the object was replaced by other bytes of the same size and metadata", async () => {
    const { url, key, archive } = await readyExport();
    const client = downloadClient();
    expect((await client.ask(url)).body).toEqual(archive);
    const object = await env.ARCHIVES.head(key);
    const forged = archive.slice();
    forged[forged.length - 1] = forged[forged.length - 1]! ^ 0xff;
    await env.ARCHIVES.put(key, forged, { customMetadata: object!.customMetadata! });
    expect((await client.ask(url)).res.status).toBe(500);
  });

  it("answers 500 at the first read when the object's bytes are not the archive its metadata describes", async () => {
    const { url, key, archive } = await readyExport();
    const object = await env.ARCHIVES.head(key);
    const forged = archive.slice();
    forged[forged.length - 1] = forged[forged.length - 1]! ^ 0xff;
    await env.ARCHIVES.put(key, forged, { customMetadata: object!.customMetadata! });
    const client = downloadClient();
    for (let i = 0; i < 2; i++) expect((await client.ask(url)).res.status).toBe(500);
  });

  it("answers 404 at once when another isolate deleted the database after this one kept the archive", async () => {
    const { url, key, databaseId } = await readyExport();
    const client = downloadClient();
    for (let i = 0; i < 2; i++) expect((await client.ask(url)).res.status).toBe(200);
    await env.DB.prepare("DELETE FROM databases WHERE id = ?").bind(databaseId).run();
    await env.ARCHIVES.delete(key);
    const reply = await client.ask(url);
    expect(reply.res.status).toBe(404);
    expect(reply.json()).toEqual({ success: false, error: expect.any(String), code: "NOT_FOUND" });
  });
});

describe("KeptArchives", () => {
  const entry = (size: number, tag = "e") => ({ etag: tag, sha256: `sha-${tag}`, bytes: new Uint8Array(size) });

  it.each([
    ["within both bounds", [10], 100, 100, [true]],
    ["at the single bound exactly", [40], 40, 100, [true]],
    ["over the single bound", [41], 40, 100, [false]],
    ["the oldest dropped to make room", [40, 40, 40], 40, 100, [false, true, true]],
    ["one filling the whole total", [30, 100], 100, 100, [false, true]],
  ] as const)("keeps %s", (_name, sizes, max, total, present) => {
    const kept = new KeptArchives(max, total);
    sizes.forEach((size, i) => kept.set(`k${i}`, entry(size, String(i))));
    expect(sizes.map((_, i) => kept.get(`k${i}`, `sha-${i}`) !== undefined)).toEqual(present);
    expect(kept.size).toBeLessThanOrEqual(total);
    expect(kept.size).toBe(sizes.filter((_, i) => present[i]).reduce((a, b) => a + b, 0));
  });

  it("finds nothing under another SHA-256, and replaces an entry set again", () => {
    const kept = new KeptArchives(100, 100);
    kept.set("k", entry(10, "a"));
    expect(kept.get("k", "sha-b")).toBeUndefined();
    kept.set("k", { ...entry(20, "b"), sha256: "sha-a" });
    expect(kept.get("k", "sha-a")?.etag).toBe("b");
    expect(kept.size).toBe(20);
  });
});
