/** A minimal DevTools protocol client, for the profile scripts. */
import type { DevServer } from "../lib/dev-server";

/** One isolate's inspector session over its WebSocket. */
export interface Inspector {
  /** Sends one command; its result, or undefined when the isolate does not answer within `timeoutMs`. */
  send<T>(method: string, params?: object, timeoutMs?: number): Promise<T | undefined>;
  close(): void;
}

/** Connects to an inspector WebSocket (`webSocketDebuggerUrl` of a `/json/list` target). */
export async function inspector(url: string): Promise<Inspector> {
  // wrangler's inspector proxy refuses a connection without an Origin; Node's WebSocket (undici)
  // takes headers in an options object that the DOM typings do not describe.
  const Socket = WebSocket as unknown as new (url: string, options: { headers: Record<string, string> }) => WebSocket;
  const ws = new Socket(url, { headers: { Origin: "http://127.0.0.1" } });
  await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`no answer from ${url}`)), 2000);
    ws.onopen = () => {
      clearTimeout(timer);
      ok(undefined);
    };
    ws.onerror = fail;
  });
  let next = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  ws.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result);
  };
  return {
    send: <T>(method: string, params: object = {}, timeoutMs = 600_000) =>
      new Promise<T | undefined>((ok) => {
        const id = next++;
        // An answered command clears its timer: a pending one would keep the script alive.
        const timer = setTimeout(() => {
          waiting.delete(id);
          ok(undefined);
        }, timeoutMs);
        waiting.set(id, (result) => {
          clearTimeout(timer);
          waiting.delete(id);
          ok(result as T);
        });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

/** The inspector address wrangler was given for the Worker (its `/json/list` names every isolate there). */
export function workerInspectorUrl(server: DevServer): string {
  const args = server.process.spawnargs;
  return `http://127.0.0.1:${args[args.indexOf("--inspector-port") + 1]}`;
}

/** Connects to the Worker isolate's inspector, the first target wrangler lists. */
export async function workerInspector(server: DevServer): Promise<Inspector> {
  const [target] = (await (await fetch(`${workerInspectorUrl(server)}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  return inspector(target!.webSocketDebuggerUrl);
}
