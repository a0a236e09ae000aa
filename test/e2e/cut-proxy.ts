/**
 * A TCP proxy in front of the Worker that cuts an archive download short: once armed, the next
 * 200 or 206 `application/gzip` reply is passed on up to `afterBodyBytes` bytes of its body, then
 * the connection is closed. Everything else (the start call, 503 polls, later downloads) passes through untouched.
 */
import { type AddressInfo, type Socket, connect, createServer } from "node:net";

export interface CutProxy {
  /** Base URL of the proxy; the Worker builds download links from it, so polls go through it too. */
  url: string;
  /** Connections cut so far. */
  cuts: number;
  /** Cut the next archive reply after this many body bytes. */
  arm(afterBodyBytes: number): void;
  close(): Promise<void>;
}

/** The status line and headers of a 200 or 206 reply; its body starts right after. */
const SUCCESS_HEAD = /HTTP\/1\.1 20[06] [^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n/g;

/** Where the body of the first archive reply in `text` starts, if its head has arrived. */
function archiveBodyStart(text: string): number | undefined {
  for (const head of text.matchAll(SUCCESS_HEAD)) {
    if (/\r\ncontent-type: application\/gzip\r\n/i.test(head[0])) return head.index + head[0].length;
  }
  return undefined;
}

/** Starts a proxy on a free port of 127.0.0.1 forwarding to `upstreamPort`. */
export async function startCutProxy(upstreamPort: number): Promise<CutProxy> {
  let armedAt: number | undefined;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(upstreamPort, "127.0.0.1");
    sockets.add(client).add(upstream);
    let seen = "";
    client.on("data", (chunk) => upstream.write(chunk));
    upstream.on("data", (chunk: Buffer) => {
      if (armedAt === undefined) return void client.write(chunk);
      const before = seen.length;
      seen += chunk.toString("latin1");
      const bodyStart = archiveBodyStart(seen);
      if (bodyStart === undefined) return void client.write(chunk);
      const cutAt = bodyStart + armedAt;
      if (seen.length < cutAt) return void client.write(chunk);
      client.end(chunk.subarray(0, Math.max(0, cutAt - before)));
      upstream.destroy();
      armedAt = undefined;
      proxy.cuts++;
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", close).on("error", close);
    upstream.on("close", () => client.end()).on("error", close);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const proxy: CutProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cuts: 0,
    arm(afterBodyBytes) {
      armedAt = afterBodyBytes;
    },
    close: () =>
      new Promise<void>((ok) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => ok());
      }),
  };
  return proxy;
}
