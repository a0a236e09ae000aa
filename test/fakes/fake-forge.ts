/**
 * A stand-in for a git forge in the Worker tests (Node side, started by vitest.config.ts): it
 * answers the Gitea/Forgejo archive URL `GET /<owner>/<repo>/archive/<branch>.tar.gz` with
 * whatever a test uploaded to the same path with PUT. A PUT with `X-Redirect-To: <url>` (and
 * optionally `X-Redirect-Status`) makes that path a redirect instead; a PUT with `X-Stall: 1`
 * makes it answer 200 and then send nothing. A PUT with `X-Require-Token: <token>` makes the
 * archive private: a GET without `Authorization: token <token>` gets 404 (what Gitea answers a
 * stranger), one with another token 401. Private archives live at Gitea's API path
 * `/api/v1/repos/<owner>/<repo>/archive/<branch>.tar.gz`. `GET /_seen?path=<path>` lists the
 * Authorization headers the forge received at a path (null for none), so a test can show which
 * hop got the token. The Gitea/Forgejo branch API
 * `GET /api/v1/repos/<owner>/<repo>/branches/<branch>` answers what a test PUT there (the
 * commit a deploy records). The forge is outside the project, so it is
 * faked at its HTTP boundary; the dev forge (scripts/dev-forge.ts) serves real git repositories
 * to the end-to-end tests.
 */
import { type Server, createServer } from "node:http";

export interface FakeForge {
  url: string;
  close(): Promise<void>;
}

export async function startFakeForge(): Promise<FakeForge> {
  const archives = new Map<string, Buffer>();
  const redirects = new Map<string, { status: number; location: string }>();
  const stalled = new Set<string>();
  const tokens = new Map<string, string>();
  const seen = new Map<string, (string | null)[]>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://forge");
    const path = url.pathname;
    if (req.method === "GET" && path === "/_seen") {
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(seen.get(url.searchParams.get("path") ?? "") ?? []));
      return;
    }
    if (req.method === "GET") seen.set(path, [...(seen.get(path) ?? []), req.headers.authorization ?? null]);
    const required = tokens.get(path);
    const api = /^\/api\/v1\/repos\/[^/]+\/[^/]+\/branches\/.+$/.test(path);
    if (!/^(\/api\/v1\/repos)?\/[^/]+\/[^/]+\/archive\/.+\.tar\.gz$/.test(path) && !path.startsWith("/hop/") && !api) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("Not found\n");
    } else if (req.method === "PUT" && typeof req.headers["x-redirect-to"] === "string") {
      redirects.set(path, { status: Number(req.headers["x-redirect-status"] ?? 302), location: req.headers["x-redirect-to"] });
      req.resume();
      req.on("end", () => res.writeHead(201).end());
    } else if (req.method === "GET" && required !== undefined && req.headers.authorization !== `token ${required}`) {
      const status = req.headers.authorization === undefined ? 404 : 401;
      res.writeHead(status, { "Content-Type": "text/plain" }).end(status === 404 ? "Not found\n" : "Unauthorized\n");
    } else if (req.method === "PUT" && req.headers["x-stall"] === "1") {
      stalled.add(path);
      req.resume();
      req.on("end", () => res.writeHead(201).end());
    } else if (req.method === "GET" && redirects.has(path)) {
      const { status, location } = redirects.get(path)!;
      res.writeHead(status, { Location: location, "Content-Type": "text/plain" }).end(`Moved to ${location}\n`);
    } else if (req.method === "GET" && stalled.has(path)) {
      res.writeHead(200, { "Content-Type": "application/gzip" });
      res.write(Buffer.from([0x1f, 0x8b]));
    } else if (req.method === "PUT") {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        archives.set(path, Buffer.concat(chunks));
        const token = req.headers["x-require-token"];
        if (typeof token === "string") tokens.set(path, token);
        res.writeHead(201).end();
      });
    } else if (req.method === "GET" && archives.has(path)) {
      const body = archives.get(path)!;
      res.writeHead(200, { "Content-Type": api ? "application/json" : "application/gzip", "Content-Length": body.length }).end(body);
    } else {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("Not found\n");
    }
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  server.unref();
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((ok) => server.close(() => ok())) };
}
