import { describe, expect, it } from "vitest";
import { AUDITED_ROUTES, AUDIT_ACTIONS, codeForStatus, envChanges, fieldNames, isRecorded, matchAuditRoute } from "../../src/audit/actions";
import { AuditFilters, toAuditQuery } from "../../src/audit/query";
import { auditId } from "../../src/auth/audit-store";

const APP = "0b8f1a4e-3c2d-4e5f-8a9b-0c1d2e3f4a5b";

describe("matchAuditRoute", () => {
  it.each([
    ["POST", "/console/api/login", "signin.password", {}],
    ["POST", "/console/signin", "signin.password", {}],
    ["POST", "/console/api/passkeys/signin", "signin.passkey", {}],
    ["DELETE", "/console/api/passkeys/abc_-1", "passkey.remove", { id: "abc_-1" }],
    ["POST", "/console/api/tokens/", "token.create", {}],
    ["PATCH", `/console/api/apps/${APP}`, "app.settings", { id: APP }],
    ["POST", `/console/apps/${APP}/deploy`, "app.deploy.manual", { id: APP }],
    ["POST", `/console/api/apps/${APP}/deploys/d1/rollback`, "app.rollback", { id: APP, deployId: "d1" }],
    ["PUT", `/console/api/apps/${APP}/env`, "env.save", { id: APP }],
    ["DELETE", `/console/api/apps/${APP}/domains/www.example.com`, "domain.remove", { id: APP, hostname: "www.example.com" }],
    ["POST", `/webhooks/apps/${APP}`, "app.deploy.push", { id: APP }],
    ["POST", `/api/v1/dbs/${APP}/export`, "database.export", { id: APP }],
    ["POST", "/admin/api/accounts/a%40b.example/credits", "credits.add", { account: "a@b.example" }],
  ])("%s %s is %s", (method, path, action, params) => {
    expect(matchAuditRoute(method, path)).toMatchObject({ route: { action }, params });
  });

  it.each([
    ["GET", "/console/api/apps"],
    ["GET", `/api/v1/dbs/${APP}/exports/x/download`],
    ["POST", "/console/api/passkeys/signin/options"],
    ["POST", "/console/api/passkeys/register/options"],
    ["DELETE", "/console/api/passkeys/"],
    ["POST", `/console/api/apps/${APP}/deploy/extra`],
    ["POST", "/console/apps/%E0%A4%A/deploy"],
    ["POST", "/healthz"],
  ])("%s %s changes nothing", (method, path) => {
    expect(matchAuditRoute(method, path)).toBeNull();
  });

  it("lists every action once, and no route twice", () => {
    expect(new Set(AUDIT_ACTIONS).size).toBe(AUDIT_ACTIONS.length);
    const keys = AUDITED_ROUTES.map(([m, p]) => `${m} ${p}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe("isRecorded", () => {
  const webhook = { action: "app.deploy.push", resource: "app", via: "webhook" } as const;
  const token = { action: "database.export", resource: "database", via: "token" } as const;
  const session = { action: "app.stop", resource: "app" } as const;
  it.each([
    [webhook, 202, true],
    [webhook, 200, false],
    [webhook, 401, false],
    [webhook, 404, false],
    [webhook, 429, false],
    [webhook, 409, true],
    [token, 200, true],
    [token, 401, false],
    [token, 429, false],
    [token, 404, true],
    [session, 409, true],
    [session, 303, true],
  ])("%o with %i: %s", (route, status, recorded) => {
    expect(isRecorded(route, status)).toBe(recorded);
  });
});

describe("codeForStatus", () => {
  it.each([
    [400, "INVALID_REQUEST"],
    [401, "UNAUTHORIZED"],
    [404, "NOT_FOUND"],
    [409, "CONFLICT"],
    [429, "RATE_LIMIT_EXCEEDED"],
    [503, "INTERNAL_ERROR"],
    [418, "REFUSED"],
  ])("%i -> %s", (status, code) => expect(codeForStatus(status)).toBe(code));
});

describe("fieldNames and envChanges keep names, never values", () => {
  it.each([
    [{ email: "a@b.c", password: "hunter22" }, ["email", "password"]],
    [{ _csrf: "x", name: "ci" }, ["name"]],
    [["not", "an", "object"], []],
    [null, []],
    ["text", []],
  ])("%o -> %o", (body, names) => expect(fieldNames(body)).toEqual(names));

  it.each([
    [[], [{ key: "A", value: "1" }], ["added:A"]],
    [[{ key: "A", value: "1" }], [{ key: "A", value: "2" }], ["changed:A"]],
    [[{ key: "A", value: "1" }], [{ key: "A", value: "1" }], []],
    [[{ key: "A", value: "1" }, { key: "B", value: "2" }], [{ key: "C", value: "secret" }], ["added:C", "removed:A", "removed:B"]],
  ])("%o to %o -> %o", (before, after, changes) => {
    expect(envChanges(before, after)).toEqual(changes);
    expect(JSON.stringify(envChanges(before, after))).not.toMatch(/secret|"1"|"2"/);
  });
});

describe("audit filters", () => {
  it.each([
    [{}, { limit: 50 }],
    [{ limit: "10", action: "app.stop", resource: APP }, { limit: 10, action: "app.stop", resource: APP }],
    [{ from: "2026-01-31", to: "2026-01-31" }, { since: Date.parse("2026-01-31T00:00:00Z"), until: Date.parse("2026-02-01T00:00:00Z") - 1 }],
    [{ before: auditId(1_700_000_000_000), action: "" }, { before: expect.stringMatching(/^1700000000000-[0-9a-f]{12}$/), action: undefined }],
  ])("%o -> %o", (query, expected) => {
    expect(toAuditQuery(AuditFilters.parse(query))).toMatchObject(expected);
  });

  it.each([
    [{ limit: "0" }, "limit: "],
    [{ limit: "101" }, "limit: "],
    [{ limit: "ten" }, "limit: "],
    [{ before: "yesterday" }, "before: "],
    [{ from: "31/01/2026" }, "from: "],
    [{ to: "2026-13-45" }, "to: "],
  ])("%o is refused naming its field", (query, start) => {
    const parsed = AuditFilters.safeParse(query);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0]!.message.startsWith(start)).toBe(true);
  });

  it("sorts row ids by time", () => {
    expect(auditId(5) < auditId(1_000)).toBe(true);
    expect(auditId(1_700_000_000_000)).toMatch(/^1700000000000-[0-9a-f]{12}$/);
  });
});
