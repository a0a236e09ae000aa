/** A minimal DevTools protocol client, for the profile scripts. */

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
