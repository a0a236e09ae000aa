/**
 * A stand-in for a git forge in the Worker tests (Node side, started by vitest.config.ts): it
 * answers the Gitea/Forgejo archive URL `GET /<owner>/<repo>/archive/<branch>.tar.gz` with
 * whatever a test uploaded to the same path with PUT. The forge is outside the project, so it is
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
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://forge").pathname;
    if (!/^\/[^/]+\/[^/]+\/archive\/.+\.tar\.gz$/.test(path)) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("Not found\n");
    } else if (req.method === "PUT") {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        archives.set(path, Buffer.concat(chunks));
        res.writeHead(201).end();
      });
    } else if (req.method === "GET" && archives.has(path)) {
      const body = archives.get(path)!;
      res.writeHead(200, { "Content-Type": "application/gzip", "Content-Length": body.length }).end(body);
    } else {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("Not found\n");
    }
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  server.unref();
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((ok) => server.close(() => ok())) };
}
