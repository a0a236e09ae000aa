/**
 * The demo account `npm start` seeds through the console's JSON routes: idempotent, so a second
 * start signs in to the same account and reuses its database.
 */
export const DEMO_EMAIL = "demo@example.com";
export const DEMO_PASSWORD = "demo-password";
export const DEMO_DATABASE = "demo";

/**
 * Sample data covering every SQLite storage class (INTEGER with 64-bit extremes, REAL at full
 * precision, TEXT with quotes, newlines and non-ASCII, BLOB, NULL), an index, a view, a trigger
 * and a table whose name needs quoting. Safe to run again: nothing is created or inserted twice.
 */
export const DEMO_SQL = `
CREATE TABLE IF NOT EXISTS customers (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  balance REAL,
  notes TEXT,
  avatar BLOB,
  visits INTEGER
);
CREATE INDEX IF NOT EXISTS customers_name_idx ON customers (name);
CREATE TABLE IF NOT EXISTS audit_log (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, action TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS customers_audit AFTER INSERT ON customers
BEGIN
  INSERT INTO audit_log (customer_id, action) VALUES (NEW.id, 'created; via "trigger"');
END;
CREATE VIEW IF NOT EXISTS big_spenders AS SELECT id, name, balance FROM customers WHERE balance > 100;
CREATE TABLE IF NOT EXISTS "order items" ("order id" INTEGER, "select" TEXT, qty INTEGER, PRIMARY KEY ("order id", "select")) WITHOUT ROWID;
INSERT OR IGNORE INTO customers (id, name, balance, notes, avatar, visits) VALUES
  (1, 'Ada Lovelace', 1815.12, 'First programmer', X'89504E470D0A1A0A', 9223372036854775807),
  (2, 'O''Brien', 0.1, 'says "hi"' || char(10) || 'second line', X'00FF00FF', -9223372036854775808),
  (3, 'Zoë Ünal 日本語 🎉', 1e308, 'tab' || char(9) || 'and CR' || char(13) || 'end', NULL, 0),
  (4, 'Tiny', 5e-324, NULL, X'', NULL),
  (5, 'Negative', -2.5e-10, '', X'DEADBEEF', -1);
INSERT OR IGNORE INTO "order items" ("order id", "select", qty) VALUES (1, 'widget', 3), (1, 'gadget''s', 1), (2, 'widget', 10);
`;

export interface DemoAccount {
  email: string;
  password: string;
  token: string;
  databaseId: string;
  /** The demo wallet's balance in DA after seeding (null when no operator token was given). */
  balance: number | null;
}

/** The demo wallet's first credit: one month of one Lite app. */
export const DEMO_CREDIT_DA = 1200;

/** A seeding call that has no answer by then is an error with its path, not a start that never ends. */
const SEED_CALL_TIMEOUT_MS = 60_000;

/** A console client speaking to the Worker at `base`, holding the session cookie. */
export class Console {
  private cookie = "";
  constructor(private readonly base: string) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(this.base + path, {
      method,
      headers: {
        Origin: this.base,
        "Content-Type": "application/json",
        ...(this.cookie ? { Cookie: this.cookie } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(SEED_CALL_TIMEOUT_MS),
    });
    const set = res.headers.get("set-cookie");
    if (set) this.cookie = set.split(";")[0]!;
    return { status: res.status, body: (await res.json()) as T };
  }

  async ok<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.call<T>(method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }
}

/**
 * Signs up (or in) the demo account, makes sure its database holds the sample data, issues a token
 * and, given the operator token, credits its wallet once with enough for one Lite app.
 */
export async function seedDemo(base: string, operatorToken?: string): Promise<DemoAccount> {
  const api = new Console(base);
  const credentials = { email: DEMO_EMAIL, password: DEMO_PASSWORD };
  const signup = await api.call("POST", "/console/api/signup", credentials);
  if (signup.status === 409) await api.ok("POST", "/console/api/login", credentials);
  else if (signup.status !== 200) throw new Error(`signup answered ${signup.status}: ${JSON.stringify(signup.body)}`);

  const { databases } = await api.ok<{ databases: { id: string; name: string }[] }>("GET", "/console/api/databases");
  const databaseId =
    databases.find((d) => d.name === DEMO_DATABASE)?.id ??
    (await api.ok<{ id: string }>("POST", "/console/api/databases", { name: DEMO_DATABASE })).id;
  if (!(await holdsDemoSchema(api, databaseId))) await api.ok("POST", `/console/api/databases/${databaseId}/sql`, { sql: DEMO_SQL });

  const started = new Date().toISOString().slice(0, 16).replace("T", " ");
  const { token } = await api.ok<{ token: string }>("POST", "/console/api/tokens", { name: `npm start ${started}` });
  return { email: DEMO_EMAIL, password: DEMO_PASSWORD, token, databaseId, balance: operatorToken ? await seedCredit(base, api, operatorToken) : null };
}

/** Every schema object DEMO_SQL creates, read from its CREATE statements. */
const DEMO_SCHEMA = [...DEMO_SQL.matchAll(/CREATE (?:TABLE|INDEX|TRIGGER|VIEW) IF NOT EXISTS (?:"([^"]+)"|(\w+))/g)].map((m) => m[1] ?? m[2]!);

/**
 * Whether the demo database already holds the sample's schema. A later start then sends no schema
 * change at all: one would be refused while an export of the database is still running (the
 * previous start's, say, stopped midway with its snapshot kept for a resume).
 */
async function holdsDemoSchema(api: Console, databaseId: string): Promise<boolean> {
  const names = DEMO_SCHEMA.map((n) => `'${n.replace(/'/g, "''")}'`).join(", ");
  const { results } = await api.ok<{ results: { rows: unknown[][] }[] }>("POST", `/console/api/databases/${databaseId}/sql`, {
    sql: `SELECT count(*) FROM sqlite_master WHERE name IN (${names})`,
  });
  return results[0]?.rows[0]?.[0] === DEMO_SCHEMA.length;
}

/** Credits the demo wallet through the operator route unless it was credited before; its balance. */
async function seedCredit(base: string, api: Console, operatorToken: string): Promise<number> {
  const wallet = await api.ok<{ balance: number; entries: { kind: string }[] }>("GET", "/console/api/wallet");
  if (wallet.entries.some((e) => e.kind === "credit")) return wallet.balance;
  return creditAccount(base, operatorToken, DEMO_EMAIL, DEMO_CREDIT_DA, "Demo credit: one month of a Lite app");
}

/** Credits an account (by id or email) through the operator route; the wallet's balance after. */
export async function creditAccount(base: string, operatorToken: string, account: string, amount: number, note: string): Promise<number> {
  const res = await fetch(`${base}/admin/api/accounts/${encodeURIComponent(account)}/credits`, {
    method: "POST",
    headers: { Authorization: `Bearer ${operatorToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({ amount, note }),
    signal: AbortSignal.timeout(SEED_CALL_TIMEOUT_MS),
  });
  if (res.status !== 201) throw new Error(`crediting ${account} answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { balance: number }).balance;
}
