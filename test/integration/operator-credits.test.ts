import { env, exports as workerExports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConsoleClient, ORIGIN, uniqueEmail } from "./helpers";

// Issue 13, "How money gets in": POST /admin/api/accounts/{account_id_or_email}/credits with the
// operator token; 401 without it, limited per client address, logged without the token.

function credit(account: string, body: unknown, token: string | null = env.OPERATOR_TOKEN!, address = "198.51.100.7"): Promise<Response> {
  return workerExports.default.fetch(
    new Request(`${ORIGIN}/admin/api/accounts/${encodeURIComponent(account)}/credits`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "CF-Connecting-IP": address, ...(token === null ? {} : { Authorization: `Bearer ${token}` }) },
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

afterEach(() => vi.restoreAllMocks());

describe("operator credits", () => {
  it("credits an account named by email or id; the wallet shows it", async () => {
    const { client, email } = await signUp();
    const byEmail = await credit(email.toUpperCase(), { amount: 1200, note: "Bank transfer 2026-11-23" });
    expect(byEmail.status).toBe(201);
    const body = (await byEmail.json()) as { account_id: string; balance: number; currency: string };
    expect(body).toMatchObject({ amount: 1200, note: "Bank transfer 2026-11-23", balance: 1200, currency: "DA" });
    const byId = await credit(body.account_id, { amount: 300, note: "Goodwill" });
    expect(((await byId.json()) as { balance: number }).balance).toBe(1500);
    const wallet = await client.json<{ balance: number; entries: { kind: string; amount: number; description: string }[] }>("GET", "/console/api/wallet");
    expect(wallet.balance).toBe(1500);
    expect(wallet.entries.map((e) => [e.kind, e.amount, e.description])).toEqual([
      ["credit", 300, "Goodwill"],
      ["credit", 1200, "Bank transfer 2026-11-23"],
    ]);
  });

  it("refuses a missing or wrong token with 401, and never logs the token", async () => {
    const { email } = await signUp();
    const lines: string[] = [];
    for (const level of ["log", "warn", "error", "info", "debug"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    }
    const wrong = "wrong-operator-token-0123456789abcdefghij";
    for (const token of [null, wrong, `${env.OPERATOR_TOKEN}x`]) {
      const res = await credit(email, { amount: 100, note: "x" }, token, "198.51.100.20");
      expect(res.status).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe("UNAUTHORIZED");
    }
    await credit(email, { amount: 100, note: "x" });
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).not.toContain(env.OPERATOR_TOKEN!);
      expect(line).not.toContain(wrong);
    }
  });

  it("limits failed calls per client address before comparing the token: 429 with Retry-After", async () => {
    const { email } = await signUp();
    const address = `203.0.113.${Math.floor(Math.random() * 200) + 1}`;
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await credit(email, { amount: 1, note: "guess" }, `guess-${i}-0123456789abcdefghijklmnop`, address)).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual([429, 429]);
    // Even the right token waits now: the limit is checked first.
    const limited = await credit(email, { amount: 1, note: "real" }, env.OPERATOR_TOKEN!, address);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("Retry-After"))).toBeGreaterThan(0);
  });

  it("answers 400 for amounts that are not whole positive DA, 404 for an unknown account", async () => {
    const { email } = await signUp();
    for (const [amount, message] of [
      [12.5, "amount: The amount is whole DA: no fractions."],
      [0, "amount: The amount must be at least 1 DA."],
      ["100", "amount: Send the amount in whole DA."],
    ] as const) {
      const res = await credit(email, { amount, note: "x" });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ success: false, code: "INVALID_REQUEST", error: message });
    }
    const missingNote = await credit(email, { amount: 5 });
    expect(((await missingNote.json()) as { error: string }).error).toBe("note: Say what the credit is for in `note`.");
    const unknown = await credit("nobody-here@example.com", { amount: 5, note: "x" });
    expect(unknown.status).toBe(404);
  });
});
