/**
 * A stand-in for a DNS-over-HTTPS resolver (JSON flavour), for local runs and tests: DNS is
 * outside the project. It answers `GET /dns-query?name=<name>&type=A|AAAA|CNAME|TXT` with
 * `application/dns-json` the way Cloudflare's resolver does (TXT data quoted), following CNAME chains among the
 * records it holds and putting the chain in the answer.
 *
 * Records come from a JSON file (re-read on every query, so editing it takes effect at once) and
 * from HTTP calls, which win for the names they set:
 *   PUT    /records/<name>   body [{"type":"CNAME","data":"web.localhost"}] or {"fail":"SERVFAIL"}
 *   DELETE /records/<name>
 *   GET    /records          everything held
 * The file has the same shape: {"shop.example.test": [{"type": "A", "data": "127.0.0.1"}]}.
 *
 *   tsx scripts/dev-dns.ts [--port N] [--file records.json]
 */
import { existsSync, readFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";

/** Port the command line uses when none is given. */
export const DEFAULT_DEV_DNS_PORT = 3953;

export type StandInRecord = { type: "A" | "AAAA" | "CNAME" | "TXT"; data: string };
/** A name's records, or a resolver failure to answer with for it. */
export type StandInEntry = StandInRecord[] | { fail: "SERVFAIL" | "REFUSED" | "HTTP_502" | "TIMEOUT" };

const TYPES = { A: 1, CNAME: 5, TXT: 16, AAAA: 28 } as const;
const RCODE = { SERVFAIL: 2, REFUSED: 5 } as const;
const norm = (name: string) => name.trim().toLowerCase().replace(/\.$/, "");

export interface DevDns {
  /** Base address; the resolver URL is `<url>/dns-query`. */
  url: string;
  resolverUrl: string;
  set(name: string, entry: StandInEntry): void;
  remove(name: string): void;
  close(): Promise<void>;
}

export async function startDevDns(options: { port?: number; file?: string; unref?: boolean } = {}): Promise<DevDns> {
  const held = new Map<string, StandInEntry>();
  const table = (): Map<string, StandInEntry> => {
    const all = new Map<string, StandInEntry>();
    if (options.file && existsSync(options.file)) {
      try {
        for (const [name, entry] of Object.entries(JSON.parse(readFileSync(options.file, "utf8")) as Record<string, StandInEntry>)) all.set(norm(name), entry);
      } catch {
        // A file being edited may be half written: answer from the HTTP-set records meanwhile.
      }
    }
    for (const [name, entry] of held) all.set(name, entry);
    return all;
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://dns");
    const json = (status: number, body: unknown, type = "application/json") => res.writeHead(status, { "content-type": type }).end(JSON.stringify(body));
    if (url.pathname === "/dns-query" && req.method === "GET") {
      const name = norm(url.searchParams.get("name") ?? "");
      const type = (url.searchParams.get("type") ?? "A").toUpperCase() as keyof typeof TYPES;
      if (!name || !(type in TYPES)) return json(400, { error: "name and type (A, AAAA, CNAME, TXT) are required" });
      const records = table();
      const answer: { name: string; type: number; TTL: number; data: string }[] = [];
      let current = name;
      for (let hop = 0; hop < 8; hop++) {
        const entry = records.get(current);
        if (entry && !Array.isArray(entry)) {
          if (entry.fail === "HTTP_502") return res.writeHead(502).end("Bad Gateway");
          if (entry.fail === "TIMEOUT") return; // never answers
          return json(200, { Status: RCODE[entry.fail], Question: [{ name, type: TYPES[type] }] }, "application/dns-json");
        }
        const cname = entry?.find((r) => r.type === "CNAME");
        if (cname && type !== "CNAME") {
          answer.push({ name: `${current}.`, type: TYPES.CNAME, TTL: 60, data: `${norm(cname.data)}.` });
          current = norm(cname.data);
          continue;
        }
        for (const r of entry?.filter((r) => r.type === type) ?? []) {
          answer.push({ name: `${current}.`, type: TYPES[type], TTL: 60, data: r.type === "CNAME" ? `${norm(r.data)}.` : r.type === "TXT" ? JSON.stringify(r.data) : r.data });
        }
        break;
      }
      const exists = answer.length > 0 || records.has(name);
      return json(200, { Status: exists ? 0 : 3, TC: false, RD: true, RA: true, AD: false, CD: false, Question: [{ name, type: TYPES[type] }], Answer: answer.length ? answer : undefined }, "application/dns-json");
    }
    const match = /^\/records\/([^/]+)$/.exec(url.pathname);
    if (match && req.method === "PUT") {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        try {
          held.set(norm(decodeURIComponent(match[1]!)), JSON.parse(Buffer.concat(chunks).toString("utf8")) as StandInEntry);
          res.writeHead(204).end();
        } catch {
          json(400, { error: "the body must be JSON: a list of {type, data} or {fail}" });
        }
      });
      return;
    }
    if (match && req.method === "DELETE") {
      held.delete(norm(decodeURIComponent(match[1]!)));
      return res.writeHead(204).end();
    }
    if (url.pathname === "/records" && req.method === "GET") return json(200, Object.fromEntries(table()));
    json(404, { error: "Not found. Queries are GET /dns-query?name=&type=; records are at /records/<name>." });
  });
  await new Promise<void>((ok, fail) => {
    server.once("error", fail);
    server.listen(options.port ?? 0, "127.0.0.1", ok);
  });
  if (options.unref) server.unref();
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  return {
    url: base,
    resolverUrl: `${base}/dns-query`,
    set: (name, entry) => void held.set(norm(name), entry),
    remove: (name) => void held.delete(norm(name)),
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const arg = (flag: string) => {
    const at = process.argv.indexOf(flag);
    return at === -1 ? undefined : process.argv[at + 1];
  };
  const dns = await startDevDns({ port: Number(arg("--port") ?? DEFAULT_DEV_DNS_PORT), file: arg("--file") });
  console.log(`DoH stand-in at ${dns.resolverUrl}${arg("--file") ? ` (records from ${arg("--file")})` : ""}`);
}
