import { generateToken } from "../../src/auth/tokens";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { bearerAuth } from "../../src/auth/bearer";
import { sha256Hex } from "../../src/lib/encoding";
import type { AppEnv } from "../../src/http/context";
import { onError } from "../../src/http/on-error";
import { requestContext } from "../../src/http/request-context";
import { ORIGIN, signedUp } from "./helpers";

/** A minimal API behind the real bearer middleware, with a clock the test moves. */
function protectedApi(now: () => number) {
  const app = new Hono<AppEnv>();
  app.use(requestContext({ now, uuid: () => crypto.randomUUID() }));
  app.use(bearerAuth());
  app.get("/whoami", (c) => c.json({ account: c.get("accountId") }));
  app.onError(onError);
  return async (auth?: string) => {
    const ctx = createExecutionContext();
    const res = await app.fetch(new Request(`${ORIGIN}/whoami`, { headers: auth ? { Authorization: auth } : {} }), env, ctx);
    await waitOnExecutionContext(ctx);
    return res;
  };
}

describe("API tokens", () => {
  it("returns the secret once; the list shows name, masked prefix, dates and never the secret", async () => {
    const client = await signedUp();
    const created = await client.json("POST", "/console/api/tokens", { name: "ci-backup" });
    expect(created).toEqual({
      id: expect.any(String),
      name: "ci-backup",
      prefix: created.token.slice(0, 8),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      token: expect.stringMatching(/^dbx_[0-9A-Za-z]{36}$/),
    });
    const listed = await client.json("GET", "/console/api/tokens");
    expect(listed).toEqual({
      tokens: [{ id: created.id, name: "ci-backup", prefix: created.prefix, created_at: created.created_at, last_used_at: null }],
    });
    expect(JSON.stringify(listed)).not.toContain(created.token);
  });

  it("keeps only the SHA-256 of the secret in D1", async () => {
    const client = await signedUp();
    const { id, token } = await client.json("POST", "/console/api/tokens", { name: "x" });
    const row = await env.DB.prepare("SELECT * FROM api_tokens WHERE id = ?").bind(id).first<Record<string, unknown>>();
    expect(row!.token_hash).toBe(await sha256Hex(token));
    expect(JSON.stringify(row)).not.toContain(token.slice(8));
  });

  it("authenticates a bearer token, records last use at most once a minute, and refuses it right after revoke", async () => {
    const client = await signedUp();
    const { id, token } = await client.json("POST", "/console/api/tokens", { name: "x" });
    let now = Date.parse("2026-01-01T00:00:00Z");
    const call = protectedApi(() => now);

    const ok = await call(`Bearer ${token}`);
    expect(ok.status).toBe(200);
    const lastUsed = async () =>
      (await env.DB.prepare("SELECT last_used_at FROM api_tokens WHERE id = ?").bind(id).first<{ last_used_at: number }>())!.last_used_at;
    expect(await lastUsed()).toBe(now);
    now += 59_000;
    await call(`Bearer ${token}`);
    expect(await lastUsed()).toBe(Date.parse("2026-01-01T00:00:00Z"));
    now += 1_000;
    await call(`Bearer ${token}`);
    expect(await lastUsed()).toBe(now);
    const { tokens } = await client.json("GET", "/console/api/tokens");
    expect(tokens[0].last_used_at).toBe(new Date(now).toISOString());

    expect((await client.call("DELETE", `/console/api/tokens/${id}`)).status).toBe(200);
    const refused = await call(`Bearer ${token}`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ success: false, code: "UNAUTHORIZED" });
    expect((await client.json("GET", "/console/api/tokens")).tokens).toEqual([]);
  });

  it.each([
    ["no header", undefined],
    ["another scheme", "Basic dXNlcjpwYXNz"],
    ["an empty bearer", "Bearer "],
    ["a malformed token", "Bearer not-a-token"],
    // Prefix, body and checksum all valid, so the lookup itself has to refuse it.
    ["a well-formed unknown token", `Bearer ${generateToken()}`],
  ])("answers 401 UNAUTHORIZED for %s", async (_, header) => {
    const res = await protectedApi(() => Date.now())(header);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ success: false, code: "UNAUTHORIZED", error: expect.any(String) });
  });

  it("cannot revoke another account's token: 404, and the token still works", async () => {
    const owner = await signedUp();
    const other = await signedUp();
    const { id, token } = await owner.json("POST", "/console/api/tokens", { name: "x" });
    const res = await other.call("DELETE", `/console/api/tokens/${id}`);
    expect(res.status).toBe(404);
    expect((await protectedApi(() => Date.now())(`Bearer ${token}`)).status).toBe(200);
  });

  it("requires a name", async () => {
    const client = await signedUp();
    const res = await client.call("POST", "/console/api/tokens", { name: "   " });
    expect(res.status).toBe(400);
    expect((await res.json<any>()).error).toMatch(/^name: Give the token a name/);
  });
});
