/**
 * The DoH stand-in (scripts/dev-dns.ts) that npm start and the tests use for custom domains:
 * answers like a DNS-over-HTTPS JSON resolver, from a file re-read on every query and from
 * records set over HTTP.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startDevDns } from "../../scripts/dev-dns";

const dir = mkdtempSync(join(tmpdir(), "dev-dns-"));
const file = join(dir, "records.json");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ask = async (base: string, name: string, type: string) =>
  (await fetch(`${base}/dns-query?name=${name}&type=${type}`, { headers: { accept: "application/dns-json" } })).json() as Promise<{ Status: number; Answer?: { name: string; type: number; data: string }[] }>;

describe("DoH stand-in", () => {
  it("answers from its file, follows CNAME chains, and lets HTTP-set records win", async () => {
    writeFileSync(file, JSON.stringify({ "shop.example.test": [{ type: "CNAME", data: "web.localhost" }], "web.localhost": [{ type: "A", data: "127.0.0.1" }] }));
    const dns = await startDevDns({ file });
    try {
      expect(await ask(dns.url, "shop.example.test", "A")).toMatchObject({
        Status: 0,
        Answer: [
          { name: "shop.example.test.", type: 5, data: "web.localhost." },
          { name: "web.localhost.", type: 1, data: "127.0.0.1" },
        ],
      });
      expect(await ask(dns.url, "shop.example.test", "CNAME")).toMatchObject({ Status: 0, Answer: [{ type: 5, data: "web.localhost." }] });
      expect((await ask(dns.url, "nowhere.example.test", "A")).Status).toBe(3);

      writeFileSync(file, JSON.stringify({ "shop.example.test": [{ type: "A", data: "203.0.113.7" }] }));
      expect((await ask(dns.url, "shop.example.test", "A")).Answer).toEqual([{ name: "shop.example.test.", type: 1, TTL: 60, data: "203.0.113.7" }]);

      const put = await fetch(`${dns.url}/records/shop.example.test`, { method: "PUT", body: JSON.stringify({ fail: "SERVFAIL" }) });
      expect(put.status).toBe(204);
      expect((await ask(dns.url, "shop.example.test", "A")).Status).toBe(2);
      await fetch(`${dns.url}/records/shop.example.test`, { method: "DELETE" });
      expect((await ask(dns.url, "shop.example.test", "A")).Answer?.[0]?.data).toBe("203.0.113.7");
    } finally {
      await dns.close();
    }
  });

  it("answers TXT records quoted, as Cloudflare's resolver does, and the Worker's reader reads them back", async () => {
    const dns = await startDevDns();
    try {
      dns.set("_cp-challenge.shop.example.test", [{ type: "TXT", data: "0123abcd" }]);
      expect(await ask(dns.url, "_cp-challenge.shop.example.test", "TXT")).toMatchObject({ Status: 0, Answer: [{ name: "_cp-challenge.shop.example.test.", type: 16, data: '"0123abcd"' }] });
      const { lookupTxt } = await import("../../src/domains/dns");
      expect(await lookupTxt({ url: dns.resolverUrl, timeoutMs: 2000 }, "_cp-challenge.shop.example.test")).toEqual({ ok: true, values: ["0123abcd"] });
      expect(await lookupTxt({ url: dns.resolverUrl, timeoutMs: 2000 }, "_cp-challenge.none.example.test")).toEqual({ ok: true, values: [] });
    } finally {
      await dns.close();
    }
  });
});
