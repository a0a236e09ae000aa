import { env, exports as workerExports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ConsoleClient, ORIGIN, uniqueEmail } from "./helpers";

// Issue 20, "Also": operator credits accept an Idempotency-Key header: the same key twice credits
// once and answers as the first call did; the key with another request answers 422
// IDEMPOTENCY_KEY_REUSED; two concurrent calls with one key credit once.

function credit(account: string, body: unknown, key?: string): Promise<Response> {
  return workerExports.default.fetch(
    new Request(`${ORIGIN}/admin/api/accounts/${encodeURIComponent(account)}/credits`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "CF-Connecting-IP": "198.51.100.70",
        Authorization: `Bearer ${env.OPERATOR_TOKEN}`,
        ...(key === undefined ? {} : { "Idempotency-Key": key }),
      },
      body: JSON.stringify(body),
    }),
  );
}

async function signUp(): Promise<{ client: ConsoleClient; email: string }> {
  const client = new ConsoleClient();
  const email = uniqueEmail();
  await client.json("POST", "/console/api/signup", { email, password: "correct horse battery" });
  return { client, email };
}

const balance = async (client: ConsoleClient) => (await client.json<{ balance: number; entries: unknown[] }>("GET", "/console/api/wallet"));
const key = () => `credit-${crypto.randomUUID()}`;

describe("operator credits with an Idempotency-Key", () => {
  it("credits once and answers the second call exactly as the first", async () => {
    const { client, email } = await signUp();
    const k = key();
    const first = await credit(email, { amount: 1200, note: "Bank transfer 7781" }, k);
    expect(first.status).toBe(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    const firstBody = await first.json();
    expect(firstBody).toMatchObject({ amount: 1200, note: "Bank transfer 7781", balance: 1200, currency: "DA" });

    // A later credit moves the balance; the replay still answers with the first call's figures.
    await credit(email, { amount: 5, note: "Other" });
    const again = await credit(email, { amount: 1200, note: "Bank transfer 7781" }, k);
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await again.json()).toEqual(firstBody);
    // The quoted (Structured Field) form is the same key.
    const quoted = await credit(email, { amount: 1200, note: "Bank transfer 7781" }, `"${k}"`);
    expect(await quoted.json()).toEqual(firstBody);

    const wallet = await balance(client);
    expect([wallet.balance, wallet.entries.length]).toEqual([1205, 2]);
  });

  it("answers the same body as the first call, the key not naming the account by id or email", async () => {
    const { client, email } = await signUp();
    const k = key();
    const first = (await (await credit(email, { amount: 40, note: "x" }, k)).json()) as { account_id: string };
    const byId = await credit(first.account_id, { amount: 40, note: "x" }, k);
    expect(byId.status).toBe(201);
    expect(await byId.json()).toEqual(first);
    expect((await balance(client)).balance).toBe(40);
  });

  it("refuses the key with another account, amount or note: 422 IDEMPOTENCY_KEY_REUSED, nothing credited", async () => {
    const { client, email } = await signUp();
    const other = await signUp();
    const k = key();
    expect((await credit(email, { amount: 100, note: "Transfer" }, k)).status).toBe(201);
    for (const [account, body] of [
      [email, { amount: 101, note: "Transfer" }],
      [email, { amount: 100, note: "Transfer 2" }],
      [other.email, { amount: 100, note: "Transfer" }],
    ] as const) {
      const res = await credit(account, body, k);
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual({ success: false, code: "IDEMPOTENCY_KEY_REUSED", error: expect.stringContaining("Idempotency-Key") });
    }
    expect((await balance(client)).balance).toBe(100);
    expect((await balance(other.client)).balance).toBe(0);
  });

  it("credits once when calls with one key race", async () => {
    const { client, email } = await signUp();
    const k = key();
    const replies = await Promise.all(Array.from({ length: 8 }, () => credit(email, { amount: 250, note: "Raced" }, k)));
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(201));
    const bodies = await Promise.all(replies.map((r) => r.json()));
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    expect(replies.filter((r) => r.headers.get("Idempotent-Replayed") === null)).toHaveLength(1);
    const wallet = await balance(client);
    expect([wallet.balance, wallet.entries.length]).toEqual([250, 1]);
  });

  it("answers 400 naming the header for a malformed key, and credits nothing", async () => {
    const { client, email } = await signUp();
    for (const bad of ["", "  ", "has space", "x".repeat(256), '"', 'a"b']) {
      const res = await credit(email, { amount: 9, note: "x" }, bad);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { code: string; error: string };
      expect(body.code).toBe("INVALID_REQUEST");
      expect(body.error).toMatch(/^Idempotency-Key must be/);
    }
    expect((await balance(client)).balance).toBe(0);
  });

  it("without a key, two identical calls credit twice (as before)", async () => {
    const { client, email } = await signUp();
    await credit(email, { amount: 10, note: "Same" });
    await credit(email, { amount: 10, note: "Same" });
    expect((await balance(client)).balance).toBe(20);
  });
});
