import { describe, expect, it } from "vitest";
import { MAX_RANGES } from "../../src/exports/ranges";
import { gunzipText, sha256Of } from "./export-helpers";
import { downloadClient, parseMultipart, readyExport } from "./download-helpers";

/** Enough incompressible rows for an archive of some kilobytes, so ranges have room. */
const SAMPLE = `CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB);
  WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 40) INSERT INTO t SELECT x, randomblob(200) FROM n;`;

describe("download: whole archive", () => {
  it("answers 200 with the archive and every header the spec lists", async () => {
    const { url, archive, databaseId, exportId } = await readyExport();
    const { res, body } = await downloadClient().ask(url);
    expect(res.status).toBe(200);
    expect(Object.fromEntries(["content-type", "content-length", "accept-ranges", "x-export-sha256", "etag", "content-disposition", "cache-control"].map((h) => [h, res.headers.get(h)]))).toEqual({
      "content-type": "application/gzip",
      "content-length": String(archive.byteLength),
      "accept-ranges": "bytes",
      "x-export-sha256": await sha256Of(archive),
      etag: `"${await sha256Of(archive)}"`,
      "content-disposition": `attachment; filename="${databaseId}-${exportId}.sql.gz"`,
      "cache-control": "private, no-store",
    });
    expect(body).toEqual(archive);
    expect(await sha256Of(body)).toBe(res.headers.get("X-Export-SHA256"));
    expect(await gunzipText(body)).toContain(`INSERT INTO "t"("a","b") VALUES(2,'two');`);
  });

  it("answers HEAD with the GET headers and no body, ignoring Range", async () => {
    const { url, archive } = await readyExport();
    const { res, body } = await downloadClient().ask(url, { method: "HEAD", headers: { Range: "bytes=0-9" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Length")).toBe(String(archive.byteLength));
    expect(res.headers.get("Content-Type")).toBe("application/gzip");
    expect(res.headers.get("X-Export-SHA256")).toBe(await sha256Of(archive));
    expect(res.headers.get("Content-Range")).toBeNull();
    expect(body.byteLength).toBe(0);
  });

  it.each([
    ["another unit", "items=0-9"],
    ["invalid syntax", "bytes=9-2"],
    ["garbage", "bytes=abc"],
    [`more than ${MAX_RANGES} ranges`, `bytes=${Array.from({ length: MAX_RANGES + 1 }, (_, i) => `${i * 3}-${i * 3}`).join(",")}`],
  ])("ignores a Range header with %s and sends everything", async (_name, range) => {
    const { url, archive } = await readyExport(SAMPLE);
    const { res, body } = await downloadClient().ask(url, { headers: { Range: range } });
    expect(res.status).toBe(200);
    expect(body).toEqual(archive);
  });
});

describe("download: ranges", () => {
  it.each([
    ["a closed range", "bytes=10-99", 10, 99],
    ["an open range", "bytes=100-", 100, -1],
    ["a suffix range", "bytes=-50", -50, -1],
    ["a last-pos past the end (clamped)", "bytes=5-99999999", 5, -1],
    ["overlapping ranges (coalesced)", "bytes=0-20,10-30", 0, 30],
  ])("answers 206 for %s", async (_name, range, first, last) => {
    const { url, archive } = await readyExport(SAMPLE);
    const size = archive.byteLength;
    const start = first < 0 ? size + first : first;
    const end = last < 0 ? size - 1 : last;
    const { res, body } = await downloadClient().ask(url, { headers: { Range: range } });
    expect(res.status).toBe(206);
    expect(res.headers.get("Content-Range")).toBe(`bytes ${start}-${end}/${size}`);
    expect(res.headers.get("Content-Length")).toBe(String(end - start + 1));
    expect(res.headers.get("Content-Type")).toBe("application/gzip");
    expect(res.headers.get("X-Export-SHA256")).toBe(await sha256Of(archive));
    expect(body).toEqual(archive.slice(start, end + 1));
  });

  it("answers several ranges with multipart/byteranges, parts in request order, exact length", async () => {
    const { url, archive } = await readyExport(SAMPLE);
    const size = archive.byteLength;
    const { res, body } = await downloadClient().ask(url, { headers: { Range: "bytes=500-599, 0-9, -20, 5-12" } });
    expect(res.status).toBe(206);
    const type = res.headers.get("Content-Type")!;
    expect(type).toMatch(/^multipart\/byteranges; boundary=\S+$/);
    expect(res.headers.get("Content-Length")).toBe(String(body.byteLength));
    expect(res.headers.get("Content-Range")).toBeNull();
    expect(res.headers.get("X-Export-SHA256")).toBe(await sha256Of(archive));
    const { parts, closed, startsWithBoundary } = parseMultipart(body, type);
    expect(startsWithBoundary && closed).toBe(true);
    const expected = [
      [500, 599],
      [0, 12],
      [size - 20, size - 1],
    ];
    expect(parts.map((p) => p.headers)).toEqual(
      expected.map(([a, b]) => ({ "content-type": "application/gzip", "content-range": `bytes ${a}-${b}/${size}` })),
    );
    parts.forEach((part, i) => expect(part.bytes).toEqual(archive.slice(expected[i]![0], expected[i]![1]! + 1)));
  });

  it.each([
    ["a range starting at the size", (size: number) => `bytes=${size}-`],
    ["a range past the end", (size: number) => `bytes=${size + 10}-${size + 20}`],
    ["a zero-length suffix", () => "bytes=-0"],
    ["several unsatisfiable ranges", (size: number) => `bytes=${size}-,-0`],
  ])("answers 416 in plain text for %s", async (_name, range) => {
    const { url, archive } = await readyExport(SAMPLE);
    const { res, text } = await downloadClient().ask(url, { headers: { Range: range(archive.byteLength) } });
    expect(res.status).toBe(416);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/plain/);
    expect(res.headers.get("Content-Range")).toBe(`bytes */${archive.byteLength}`);
    expect(() => JSON.parse(text())).toThrow();
    // Nothing that describes the archive: a client saving by the server's file name or checking
    // the hash must not take this text for the archive.
    for (const name of ["Content-Disposition", "ETag", "X-Export-SHA256", "Accept-Ranges"]) expect(res.headers.get(name)).toBeNull();
  });

  it("honours a range with the current ETag in If-Range and sends everything for any other value", async () => {
    const { url, archive } = await readyExport(SAMPLE);
    const etag = `"${await sha256Of(archive)}"`;
    const client = downloadClient();
    const same = await client.ask(url, { headers: { Range: "bytes=0-9", "If-Range": etag } });
    expect(same.res.status).toBe(206);
    expect(same.body).toEqual(archive.slice(0, 10));
    for (const other of ['"0000"', `W/${etag}`, "Sat, 01 Jan 2000 00:00:00 GMT"]) {
      const changed = await client.ask(url, { headers: { Range: "bytes=0-9", "If-Range": other } });
      expect(changed.res.status).toBe(200);
      expect(changed.body).toEqual(archive);
    }
    const unsatisfiable = await client.ask(url, { headers: { Range: `bytes=${archive.byteLength}-`, "If-Range": '"other"' } });
    expect(unsatisfiable.res.status).toBe(200);
  });

  it("resumes a download from where a partial file stops and gets the same SHA-256", async () => {
    const { url, archive } = await readyExport(SAMPLE);
    const client = downloadClient();
    const head = (await client.ask(url, { headers: { Range: "bytes=0-999" } })).body;
    const tail = (await client.ask(url, { headers: { Range: `bytes=${head.byteLength}-` } })).body;
    const joined = new Uint8Array([...head, ...tail]);
    expect(await sha256Of(joined)).toBe(await sha256Of(archive));
  });
});
