import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsoleSession, download, parseMultipart, pollUntilReady, sha256, startExport } from "./export-helpers";
import { startWorker, type Worker } from "./harness";

const MiB = 1024 * 1024;

describe("ranged download of a multi-megabyte archive through wrangler dev", () => {
  let worker: Worker;
  let url: string;
  let size: number;
  let expected: string;

  beforeAll(async () => {
    // Room for the many requests below; the limit itself is tested in workerd.
    worker = await startWorker({ RATE_LIMIT_BURST: "500" });
    const session = new ConsoleSession(worker.url);
    await session.call("POST", "/console/api/signup", { email: `ranges-${Date.now()}@example.com`, password: "correct horse battery" });
    const { token } = await session.call<{ token: string }>("POST", "/console/api/tokens", { name: "ranges" });
    const { id } = await session.call<{ id: string }>("POST", "/console/api/databases", { name: "big" });
    // 12 MiB of random bytes, written as hex, gzip to about 13 MiB: more than one 10 MiB upload part.
    await session.sql(
      id,
      `CREATE TABLE noise (id INTEGER PRIMARY KEY, bytes BLOB);
       WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 48) INSERT INTO noise SELECT x, randomblob(262144) FROM n;`,
    );
    url = await startExport(worker.url, token, id);
    const ready = await pollUntilReady(url);
    expect(ready.status).toBe(200);
    size = Number(ready.headers.get("Content-Length"));
    expected = ready.headers.get("X-Export-SHA256")!;
  }, 180_000);
  afterAll(async () => {
    await worker?.stop();
  });

  it("is several megabytes and whole downloads match X-Export-SHA256", async () => {
    expect(size).toBeGreaterThan(10 * MiB);
    const { body } = await download(url);
    expect(body.byteLength).toBe(size);
    expect(sha256(body)).toBe(expected);
  });

  it("reassembles single-range pieces into the same archive", async () => {
    const piece = 3 * MiB + 12345;
    const whole = new Uint8Array(size);
    for (let start = 0; start < size; start += piece) {
      const end = Math.min(size, start + piece) - 1;
      const { res, body } = await download(url, { Range: `bytes=${start}-${end}` });
      expect(res.status).toBe(206);
      expect(res.headers.get("Content-Range")).toBe(`bytes ${start}-${end}/${size}`);
      expect(res.headers.get("X-Export-SHA256")).toBe(expected);
      expect(body.byteLength).toBe(end - start + 1);
      whole.set(body, start);
    }
    expect(sha256(whole)).toBe(expected);
  });

  it("reassembles multipart/byteranges replies into the same archive", async () => {
    // Every other piece per request, so no two ranges touch and none are merged.
    const piece = 1 * MiB + 777;
    const pieces: [number, number][] = [];
    for (let start = 0; start < size; start += piece) pieces.push([start, Math.min(size, start + piece) - 1]);
    const whole = new Uint8Array(size);
    let covered = 0;
    for (const parity of [0, 1]) {
      const ranges = pieces.filter((_, i) => i % 2 === parity);
      const { res, body } = await download(url, { Range: `bytes=${ranges.map(([a, b]) => `${a}-${b}`).join(",")}` });
      expect(res.status).toBe(206);
      expect(Number(res.headers.get("Content-Length"))).toBe(body.byteLength);
      const parts = parseMultipart(body, res.headers.get("Content-Type")!);
      expect(parts.map((p) => [p.start, p.end])).toEqual(ranges);
      for (const part of parts) {
        expect(part.total).toBe(size);
        expect(part.bytes.byteLength).toBe(part.end - part.start + 1);
        whole.set(part.bytes, part.start);
        covered += part.bytes.byteLength;
      }
    }
    expect(covered).toBe(size);
    expect(sha256(whole)).toBe(expected);
  });
});
