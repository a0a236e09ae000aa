import { afterEach, describe, expect, it, vi } from "vitest";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import wranglerToml from "../../wrangler.toml?raw";
import { createApp } from "../../src/app";
import { defaultDeps } from "../../src/http/context";
import { SUCCESS_SAMPLE_RATE } from "../../src/http/request-log";
import { ConsoleClient, accountWithToken, ORIGIN, uniqueEmail } from "./helpers";

/** The Worker with the draw that samples success lines fixed: 0 writes every line, 0.5 none. */
function workerDrawing(draw: number) {
  const app = createApp({ ...defaultDeps, random: () => draw });
  return {
    async fetch(request: Request): Promise<Response> {
      const ctx = createExecutionContext();
      const res = await app.fetch(request, env, ctx);
      await waitOnExecutionContext(ctx);
      return res;
    },
  };
}
/** Every line written, successes included: what the secret checks below read. */
const everyLine = workerDrawing(0);

/** Every line the Worker logs while `work` runs. */
async function captureLogs(work: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  for (const level of ["log", "warn", "error", "info", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
  }
  await work();
  return lines;
}

afterEach(() => vi.restoreAllMocks());

describe("request logs", () => {
  it("write every error's line with route pattern, status, duration and the request id of X-Request-Id", async () => {
    const client = new ConsoleClient(workerDrawing(0.5));
    let requestId = "";
    const lines = await captureLogs(async () => {
      const res = await client.call("GET", "/console/api/databases");
      expect(res.status).toBe(401);
      requestId = res.headers.get("X-Request-Id")!;
    });
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { level: "info", msg: "request", request_id: requestId, method: "GET", route: "/console/api/databases", status: 401, duration_ms: expect.any(Number) },
    ]);
  });

  it("write a sample of successes, each line saying how many requests it stands for, and nothing for the others", async () => {
    const sampled = new ConsoleClient(workerDrawing(0));
    let requestId = "";
    const lines = await captureLogs(async () => {
      await sampled.json("POST", "/console/api/signup", { email: uniqueEmail(), password: "correct horse battery" });
      const res = await sampled.call("GET", "/console/api/databases");
      requestId = res.headers.get("X-Request-Id")!;
    });
    const entries = lines.map((l) => JSON.parse(l));
    expect(entries).toHaveLength(2);
    expect(entries[1]).toEqual({
      level: "info",
      msg: "request",
      request_id: requestId,
      method: "GET",
      route: "/console/api/databases",
      status: 200,
      duration_ms: expect.any(Number),
      account_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      sample_rate: SUCCESS_SAMPLE_RATE,
    });

    const unsampled = new ConsoleClient(workerDrawing(0.5));
    const none = await captureLogs(async () => {
      await unsampled.json("POST", "/console/api/signup", { email: uniqueEmail(), password: "correct horse battery" });
      expect((await unsampled.call("GET", "/console/api/databases")).status).toBe(200);
    });
    expect(none).toEqual([]);
  });

  it("never hold a password, token, cookie or SQL parameter value", async () => {
    const client = new ConsoleClient(everyLine);
    const password = "Sup3r-Secret-Passphrase";
    const secrets: string[] = [password];
    const lines = await captureLogs(async () => {
      await client.json("POST", "/console/api/signup", { email: uniqueEmail(), password });
      secrets.push(client.cookie.split("=")[1]!);
      const { token } = await client.json("POST", "/console/api/tokens", { name: "t" });
      secrets.push(token);
      const db = await client.json("POST", "/console/api/databases", { name: "d" });
      await client.json("POST", `/console/api/databases/${db.id}/sql`, { sql: "SELECT ?", params: ["param-value-4711"] });
      secrets.push("param-value-4711");
      await client.call("POST", "/console/api/login", { email: uniqueEmail(), password });
      await client.call("POST", `/console/api/databases/${db.id}/sql`, { sql: "SELECT * FROM nowhere WHERE x = ?", params: ["param-value-4711"] });
    });
    expect(lines.length).toBeGreaterThan(5);
    for (const secret of secrets) {
      for (const line of lines) expect(line).not.toContain(secret);
    }
  });

  it("never hold a download link's signature, on start, download, HEAD or a forged link", async () => {
    const { token, databaseId } = await accountWithToken();
    let sig = "";
    const lines = await captureLogs(async () => {
      const start = await everyLine.fetch(
        new Request(`${ORIGIN}/api/v1/dbs/${databaseId}/export`, { method: "POST", headers: { Authorization: `Bearer ${token}` } }),
      );
      const { url } = await start.json<{ url: string }>();
      sig = new URL(url).searchParams.get("sig")!;
      await everyLine.fetch(new Request(url));
      await everyLine.fetch(new Request(url, { method: "HEAD" }));
      await everyLine.fetch(new Request(url.replace(/sig=./, "sig=Z")));
    });
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const line of lines) {
      expect(line).not.toContain("sig=");
      expect(line).not.toContain(sig);
    }
  });
});

describe("Workers observability", () => {
  /** The body of one `[section]` of wrangler.toml, up to the next header. */
  const section = (name: string) => new RegExp(`^\\[${name.replace(".", "\\.")}\\]\\n([^[]*)`, "m").exec(wranglerToml)?.[1] ?? "";

  it("keeps invocation logs, which record each URL with its query, switched off", () => {
    expect(section("observability")).toMatch(/^enabled = true$/m);
    expect(section("observability.logs")).toMatch(/^invocation_logs = false$/m);
    // An environment of its own would need the same setting.
    expect(wranglerToml).not.toMatch(/^\[env\.[^\]]+\.observability/m);
  });
});
