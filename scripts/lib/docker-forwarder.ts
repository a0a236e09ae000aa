/**
 * A localhost-only TCP forwarder to the Docker socket. The Worker (workerd) can `fetch` an HTTP
 * URL but cannot open a unix socket, so development and tests give it `http://127.0.0.1:<port>`
 * and this pipes each connection, byte for byte, to `/var/run/docker.sock`.
 */
import { access, constants } from "node:fs/promises";
import { type Socket, connect, createServer } from "node:net";

/** Where the Docker Engine listens on Linux by default. */
export const DEFAULT_DOCKER_SOCKET = "/var/run/docker.sock";

export interface DockerForwarder {
  /** `http://127.0.0.1:<port>`: the engine's API base for the Worker. */
  url: string;
  /** Stops listening and ends every open connection. */
  close(): Promise<void>;
}

/** Whether the Docker socket exists and can be opened for reading and writing. */
export async function dockerSocketAvailable(path: string = DEFAULT_DOCKER_SOCKET): Promise<boolean> {
  try {
    await access(path, constants.R_OK | constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Listens on 127.0.0.1 (never another interface: the socket is root-equivalent) and forwards
 * each connection to the unix socket. `port` 0 or absent picks a free port.
 */
export async function startDockerForwarder(options: { socketPath?: string; port?: number } = {}): Promise<DockerForwarder> {
  const socketPath = options.socketPath ?? DEFAULT_DOCKER_SOCKET;
  const open = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ path: socketPath, allowHalfOpen: true });
    open.add(client);
    open.add(upstream);
    pipeBothWays(client, upstream, () => {
      open.delete(client);
      open.delete(upstream);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("The Docker forwarder has no TCP address.");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Pipes two sockets into each other. An end from one side becomes an end on the other (half
 * close: a client may finish sending a request body and still read the reply); an error or a
 * full close on either side tears both down.
 */
function pipeBothWays(a: Socket, b: Socket, done: () => void): void {
  let finished = false;
  const teardown = () => {
    if (finished) return;
    finished = true;
    a.destroy();
    b.destroy();
    done();
  };
  a.pipe(b);
  b.pipe(a);
  for (const socket of [a, b]) {
    socket.on("error", teardown);
    socket.on("close", teardown);
  }
}
