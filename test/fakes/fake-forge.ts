/**
 * A stand-in for a git forge in the Worker tests (Node side, started by vitest.config.ts): it
 * answers the Gitea/Forgejo archive URL `GET /<owner>/<repo>/archive/<branch>.tar.gz` with
 * whatever a test uploaded to the same path with PUT. A PUT with `X-Redirect-To: <url>` (and
 * optionally `X-Redirect-Status`) makes that path a redirect instead; a PUT with `X-Stall: 1`
 * makes it answer 200 and then send nothing. The Gitea/Forgejo branch API
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
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://forge").pathname;
    const api = /^\/api\/v1\/repos\/[^/]+\/[^/]+\/branches\/.+$/.test(path);
    if (!/^\/[^/]+\/[^/]+\/archive\/.+\.tar\.gz$/.test(path) && !path.startsWith("/hop/") && !api) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("Not found\n");
    } else if (req.method === "PUT" && typeof req.headers["x-redirect-to"] === "string") {
      redirects.set(path, { status: Number(req.headers["x-redirect-status"] ?? 302), location: req.headers["x-redirect-to"] });
      req.resume();
      req.on("end", () => res.writeHead(201).end());
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
