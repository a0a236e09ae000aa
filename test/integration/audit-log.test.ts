import { env, exports as workerExports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signBody } from "../../src/webhooks/signature";
import { type AppJson, TEST_CREDIT, httpdFiles, publishRepository, waitForDeploy } from "./apps-helpers";
import { PageClient } from "./console-pages-helpers";
import { ConsoleClient, ORIGIN, creditAccount, uniqueEmail } from "./helpers";

// The audit log: one row per state change of an account and its resources (or a refused
// attempt), read back through `GET /console/api/audit`; and no row holds any secret the test made.

interface Entry {
  id: string;
  at: string;
  actor: { kind: string; id: string | null; name: string | null };
  address: string | null;
  user_agent: string | null;
  action: string;
  resource: { kind: string; id: string | null; name: string | null };
  fields: string[];
  outcome: "done" | "refused";
  code: string | null;
  request_id: string | null;
}

let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;
const PASSWORD = "correct horse battery";
const NEW_PASSWORD = "a much better password 91";

/** Every entry of the client's log, page by page (newest first). */
async function allEntries(client: ConsoleClient, query = ""): Promise<Entry[]> {
  const out: Entry[] = [];
  let before = "";
  for (;;) {
    const page = await client.json<{ entries: Entry[]; next_before: string | null }>("GET", `/console/api/audit?limit=100${query}${before ? `&before=${before}` : ""}`);
    out.push(...page.entries);
    if (!page.next_before) return out;
    before = page.next_before;
  }
}

const find = (entries: Entry[], action: string, result?: "done" | "refused") => entries.find((e) => e.action === action && (!result || e.outcome === result));

async function signUp(email: string): Promise<ConsoleClient> {
  const client = new ConsoleClient();
  const res = await client.call("POST", "/console/api/signup", { email, password: PASSWORD }, { "User-Agent": "AuditTest/1.0", "CF-Connecting-IP": "203.0.113.7" });
  expect(res.status).toBe(200);
  return client;
}

describe("audit log", { timeout: 120_000 }, () => {
  const secrets: string[] = [PASSWORD, NEW_PASSWORD];
  const email = uniqueEmail();
  let client: ConsoleClient;
  let entries: Entry[] = [];

  it("records sign-ins (done and refused) and the account's security changes", async () => {
    client = await signUp(email);
    const wrong = await new ConsoleClient().call("POST", "/console/api/login", { email, password: "wrong password here" }, { "CF-Connecting-IP": "198.51.100.9" });
    expect(wrong.status).toBe(401);
    const second = new ConsoleClient();
    await second.json("POST", "/console/api/login", { email, password: PASSWORD });
    // Two-step sign-in: a setup (its secret is a secret), then a wrong code refused.
    const setup = await client.json<{ secret: string; otpauth_url: string }>("POST", "/console/api/totp/setup", {});
    secrets.push(setup.secret, setup.otpauth_url);
    expect((await client.call("POST", "/console/api/totp/enable", { code: "000000" })).status).toBe(400);
    // A passkey (its row made directly: registering one needs a browser's authenticator), removed.
    const me = await client.json<{ sessions: { id: string; current: boolean }[] }>("GET", "/console/api/sessions");
    const accountId = (await env.DB.prepare("SELECT id FROM accounts WHERE email = ?").bind(email).first<{ id: string }>())!.id;
    await env.DB.prepare("INSERT INTO passkeys (id, account_id, name, public_key, counter, created_at) VALUES (?, ?, 'Work laptop', 'AAAA', 0, ?)").bind(`pk-${n}`, accountId, Date.now()).run();
    await client.json("DELETE", `/console/api/passkeys/pk-${n}`);
    // Sessions: one ended by id, then every other; the password changed.
    const other = (await client.json<{ sessions: { id: string; current: boolean }[] }>("GET", "/console/api/sessions")).sessions.find((s) => !s.current)!;
    await client.json("DELETE", `/console/api/sessions/${other.id}`);
    await client.json("POST", "/console/api/sessions/revoke-others", {});
    await client.json("POST", "/console/api/password", { current_password: PASSWORD, new_password: NEW_PASSWORD });
    expect(me.sessions.length).toBeGreaterThan(0);

    entries = await allEntries(client);
    const signup = find(entries, "account.signup")!;
    expect(signup).toMatchObject({ actor: { kind: "session", name: email }, address: "203.0.113.7", user_agent: "AuditTest/1.0", resource: { kind: "account", id: accountId, name: email }, outcome: "done", code: null });
    expect(signup.fields).toEqual(["email", "password"]);
    expect(signup.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(find(entries, "signin.password", "refused")).toMatchObject({ actor: { kind: "visitor" }, address: "198.51.100.9", code: "UNAUTHORIZED" });
    expect(find(entries, "signin.password", "done")).toMatchObject({ actor: { kind: "session" } });
    expect(find(entries, "totp.setup", "done")).toBeDefined();
    expect(find(entries, "totp.enable", "refused")).toMatchObject({ fields: ["code"], code: "INVALID_REQUEST" });
    expect(find(entries, "passkey.remove", "done")).toMatchObject({ resource: { kind: "passkey", id: `pk-${n}`, name: "Work laptop" } });
    expect(find(entries, "session.end", "done")).toMatchObject({ resource: { kind: "session", id: other.id } });
    expect(find(entries, "session.end_others", "done")).toBeDefined();
    expect(find(entries, "password.change", "done")).toMatchObject({ fields: ["current_password", "new_password"] });
    // Newest first.
    expect([...entries].sort((a, b) => (a.id < b.id ? 1 : -1)).map((e) => e.id)).toEqual(entries.map((e) => e.id));
  });

  it("records tokens, databases (SQL writes as a count, exports by token and by page) and credits", async () => {
    const token = await client.json<{ id: string; token: string }>("POST", "/console/api/tokens", { name: "ci box" });
    secrets.push(token.token);
    const db = await client.json<{ id: string }>("POST", "/console/api/databases", { name: "orders" });
    await client.json("POST", `/console/api/databases/${db.id}/sql`, { sql: "CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('sql-value-secret'), ('two')" });
    const started = await workerExports.default.fetch(new Request(`${ORIGIN}/api/v1/dbs/${db.id}/export`, { method: "POST", headers: { Authorization: `Bearer ${token.token}` } }));
    expect(started.status).toBe(200);
    await creditAccount(email, 5000, "Thanks for testing");
    const gone = await client.json<{ id: string }>("POST", "/console/api/databases", { name: "scratch" });
    await client.json("DELETE", `/console/api/databases/${gone.id}`);
    await client.json("DELETE", `/console/api/tokens/${token.id}`);

    const page = new PageClient();
    await page.post("/console/signin", { email, password: NEW_PASSWORD });
    const pageDb = await page.post("/console/databases", { name: "from-page" });
    const pageDbId = /([0-9a-f-]{36})$/.exec(pageDb.headers.get("Location")!)![1]!;
    await page.post(`/console/databases/${pageDbId}/exports`, {});
    expect((await page.post(`/console/databases/${pageDbId}/sql`, { sql: "CREATE TABLE p (x TEXT); INSERT INTO p VALUES ('page-sql-value')" })).status).toBe(200);

    entries = await allEntries(client);
    expect(find(entries, "token.create")).toMatchObject({ resource: { kind: "token", id: token.id, name: "ci box" }, fields: ["name"] });
    expect(find(entries, "token.revoke")).toMatchObject({ resource: { id: token.id, name: "ci box" }, outcome: "done" });
    expect(find(entries, "database.create")).toMatchObject({ resource: { kind: "database", name: "from-page", id: pageDbId } });
    const sql = entries.find((e) => e.action === "database.sql" && e.resource.id === db.id)!;
    expect(sql.resource).toMatchObject({ id: db.id, name: "orders" });
    // The count of rows written as SQLite reports it (the CREATE writes the schema too).
    expect(sql.fields).toEqual(["statements:2", expect.stringMatching(/^rows_written:[2-9]$/)]);
    expect(entries.find((e) => e.action === "database.sql" && e.resource.id === pageDbId)!.fields).toEqual(["statements:2", expect.stringMatching(/^rows_written:[1-9]$/)]);
    expect(entries.filter((e) => e.action === "database.export").map((e) => e.actor.kind).sort()).toEqual(["session", "token"]);
    expect(find(entries, "database.export")!.resource).toMatchObject({ kind: "database" });
    expect(entries.find((e) => e.action === "database.export" && e.actor.kind === "token")).toMatchObject({ actor: { id: token.id, name: "ci box" }, resource: { id: db.id, name: "orders" } });
    expect(find(entries, "database.delete")).toMatchObject({ resource: { id: gone.id, name: "scratch" } });
    expect(find(entries, "credits.add")).toMatchObject({ actor: { kind: "operator" }, resource: { kind: "wallet", name: email }, fields: ["amount", "note"] });
    expect((await allEntries(client, "&action=database.sql")).map((e) => e.action)).toEqual(["database.sql", "database.sql"]);
    expect((await allEntries(client, `&resource=${db.id}`)).every((e) => e.resource.id === db.id)).toBe(true);
  });

  it("records apps: create, settings, env keys, controls, deploys by kind, rollback, domains, webhook, source token, delete", async () => {
    await creditAccount(email, TEST_CREDIT);
    const repository = await publishRepository(unique("audit"), httpdFiles("<p>audit</p>"));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Audited", repository, subdomain: unique("audited"), plan: "starter" });
    await client.json("PATCH", `/console/api/apps/${app.id}`, { branch: "main" });
    await client.json("PUT", `/console/api/apps/${app.id}/env`, { version: 0, variables: [{ key: "KEEP", value: "env-value-one" }, { key: "DROP", value: "env-value-two" }] });
    await client.json("PUT", `/console/api/apps/${app.id}/env`, { version: 1, variables: [{ key: "KEEP", value: "env-value-three" }, { key: "NEW", value: "env-value-four" }] });
    secrets.push("env-value-one", "env-value-two", "env-value-three", "env-value-four");
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    await waitForDeploy(client, app.id);
    const hook = await client.json<{ url: string; secret: string }>("POST", `/console/api/apps/${app.id}/webhook/rotate`);
    secrets.push(hook.secret);
    const body = JSON.stringify({ ref: "refs/heads/main", before: "0".repeat(40), after: "6dcb09b5b57875f334f61aebed695e2e4193db5e" });
    const signature = await signBody(new TextEncoder().encode(body) as Uint8Array<ArrayBuffer>, hook.secret);
    const pushed = await workerExports.default.fetch(
      new Request(hook.url, { method: "POST", headers: { "Content-Type": "application/json", "X-GitHub-Event": "push", "X-GitHub-Delivery": "delivery-77", "X-Hub-Signature-256": `sha256=${signature}` }, body }),
    );
    expect(pushed.status).toBe(202);
    await waitForDeploy(client, app.id);
    for (const control of ["stop", "start", "restart"]) await client.call("POST", `/console/api/apps/${app.id}/${control}`);
    await waitForDeploy(client, app.id);
    await client.call("POST", `/console/api/apps/${app.id}/plan`, { plan: "lite" });
    const deploys = (await client.json<{ deploys: { id: string }[] }>("GET", `/console/api/apps/${app.id}/deploys`)).deploys;
    await client.call("POST", `/console/api/apps/${app.id}/deploys/${deploys[deploys.length - 1]!.id}/rollback`);
    const hostname = `${unique("www")}.example.com`;
    await client.call("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    await client.call("DELETE", `/console/api/apps/${app.id}/domains/${hostname}`);
    const page = new PageClient();
    await page.post("/console/signin", { email, password: NEW_PASSWORD });
    await page.post(`/console/apps/${app.id}/source-token`, { source_token: "forge-token-secret-55" });
    secrets.push("forge-token-secret-55");
    await waitForDeploy(client, app.id).catch(() => undefined);
    await client.call("DELETE", `/console/api/apps/${app.id}`);

    entries = await allEntries(client);
    const about = (action: string) => entries.filter((e) => e.action === action && e.resource.id === app.id);
    expect(about("app.create")[0]).toMatchObject({ resource: { kind: "app", name: "Audited" }, outcome: "done" });
    expect(about("app.settings")[0]!.fields).toEqual(["branch"]);
    const saves = about("env.save").map((e) => e.fields);
    expect(saves).toContainEqual(["added:KEEP", "added:DROP"]);
    expect(saves).toContainEqual(["changed:KEEP", "added:NEW", "removed:DROP"]);
    expect(about("app.deploy.manual")[0]).toMatchObject({ outcome: "done" });
    expect(about("app.deploy.push")[0]).toMatchObject({ actor: { kind: "webhook", id: "delivery-77", name: "github" }, outcome: "done" });
    for (const action of ["app.stop", "app.start", "app.restart", "app.plan", "app.rollback", "webhook.rotate", "source_token.set", "app.delete"]) {
      expect(about(action), action).toHaveLength(1);
    }
    expect(about("source_token.set")[0]!.fields).toEqual(["source_token"]);
    expect(entries.find((e) => e.action === "domain.add")).toMatchObject({ resource: { kind: "domain", id: hostname, name: hostname } });
    expect(entries.find((e) => e.action === "domain.remove")).toMatchObject({ resource: { kind: "domain", id: hostname } });
  });

  it("holds no secret value in any row: passwords, token secrets, TOTP secrets, env values, webhook secrets, source tokens", async () => {
    const rows = await env.DB.prepare("SELECT * FROM audit_log").all();
    const text = JSON.stringify(rows.results);
    expect(rows.results.length).toBeGreaterThan(30);
    for (const secret of secrets) expect(text.includes(secret), `a row holds ${secret.slice(0, 6)}…`).toBe(false);
    expect(text).not.toContain("sql-value-secret");
    expect(text).not.toContain("page-sql-value");
  });

  it("keeps another account's log apart, needs a session, and names a bad filter", async () => {
    const stranger = await signUp(uniqueEmail());
    const theirs = await allEntries(stranger);
    expect(theirs.map((e) => e.action)).toEqual(["account.signup"]);
    expect((await new ConsoleClient().call("GET", "/console/api/audit")).status).toBe(401);
    const bad = await stranger.call("GET", "/console/api/audit?limit=500");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^limit: /);
    expect((await stranger.call("GET", "/console/api/audit?before=nope")).status).toBe(400);
  });

  it("shows the Security log page with its filters", async () => {
    const page = new PageClient();
    await page.post("/console/signin", { email, password: NEW_PASSWORD });
    const html = await page.page("/console/profile/security-log?action=database.sql");
    expect(html).toContain("<h1>Security log</h1>");
    expect(html).toContain('data-action="database.sql"');
    expect(html).not.toContain('data-action="token.create"');
    const bad = await page.get("/console/profile/security-log?from=yesterday");
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("from: Use a date like 2026-01-31.");
  });
});
