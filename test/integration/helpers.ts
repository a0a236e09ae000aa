import { env, exports as workerExports } from "cloudflare:workers";

export const ORIGIN = "http://control.test";

/** A console client: keeps the session cookie and sends our own Origin, as a browser would. */
/** Credits an account's wallet through the operator route (the test OPERATOR_TOKEN of vitest.config.ts). */
export async function creditAccount(account: string, amount: number, note = "Test credit"): Promise<void> {
  const res = await workerExports.default.fetch(
    new Request(`${ORIGIN}/admin/api/accounts/${encodeURIComponent(account)}/credits`, {
      method: "POST",
      headers: { Authorization: `Bearer ${env.OPERATOR_TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ amount, note }),
    }),
  );
  if (res.status !== 201) throw new Error(`credit -> ${res.status} ${await res.text()}`);
}

export class ConsoleClient {
  cookie = "";
  constructor(readonly fetcher: { fetch: (req: Request) => Promise<Response> } = workerExports.default) {}

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const init: RequestInit = {
      method,
      headers: {
        Origin: ORIGIN,
        ...(this.cookie ? { Cookie: this.cookie } : {}),
        ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    };
    const res = await this.fetcher.fetch(new Request(ORIGIN + path, init));
    const set = res.headers.get("Set-Cookie");
    if (set) {
      const pair = set.split(";")[0]!;
      this.cookie = pair.endsWith("=") ? "" : pair;
    }
    return res;
  }

  async json<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.call(method, path, body);
    if (!res.ok) throw new Error(`${method} ${path} -> ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  }
}

let counter = 0;
export function uniqueEmail(): string {
  return `user${Date.now()}-${++counter}-${Math.random().toString(36).slice(2, 8)}@example.com`;
}

/** Signs up a fresh account and returns its client. */
export async function signedUp(): Promise<ConsoleClient> {
  const client = new ConsoleClient();
  await client.json("POST", "/console/api/signup", { email: uniqueEmail(), password: "correct horse battery" });
  return client;
}

/** A fresh account with one API token and one database. */
export async function accountWithToken() {
  const client = await signedUp();
  const { token } = await client.json<{ token: string }>("POST", "/console/api/tokens", { name: "ci" });
  const db = await client.json<{ id: string }>("POST", "/console/api/databases", { name: "main" });
  return { client, token, databaseId: db.id };
}
