/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { getTableConfig } from "drizzle-orm/sqlite-core";
import * as schema from "../../src/db/schema";

// ARCHITECTURE.md, Table owners: one module owns each table and every other module calls it. A
// file outside a table's owner that names the table in SQL text or in a drizzle query fails here.

/** Table (SQL name) -> the file, or the folder ending in "/", that owns it. */
export const TABLE_OWNERS: Record<string, string> = {
  apps: "src/apps/store.ts",
  deploys: "src/apps/store.ts",
  ledger_entries: "src/billing/ledger.ts",
  app_env_vars: "src/envvars/store.ts",
  custom_domains: "src/domains/store.ts",
  expired_domain_claims: "src/domains/store.ts",
  subdomain_holds: "src/apps/subdomain-holds.ts",
  domain_last_owners: "src/domains/last-owners.ts",
  credit_requests: "src/billing/credit-requests.ts",
  instance_ports: "src/runtime/ports.ts",
  retire_ledger: "src/apps/retire-ledger.ts",
  reconcile_runs: "src/apps/reconcile-runs.ts",
  exports: "src/exports/store.ts",
  r2_cleanup: "src/exports/cleanup.ts",
  databases: "src/databases/",
  accounts: "src/auth/",
  sessions: "src/auth/",
  account_totp: "src/auth/",
  recovery_codes: "src/auth/",
  api_tokens: "src/auth/",
  passkeys: "src/auth/",
  passkey_challenges: "src/auth/",
  audit_log: "src/auth/",
  notification_channels: "src/notifications/",
  notification_deliveries: "src/notifications/",
  notification_incidents: "src/notifications/",
};

const sources = import.meta.glob("../../src/**/*.{ts,tsx}", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

/** The drizzle table objects of the schema, with their SQL names. */
const tables = Object.entries(schema).flatMap(([exportName, value]) => {
  try {
    return [{ exportName, sqlName: getTableConfig(value as never).name }];
  } catch {
    return [];
  }
});

/** Where a file names a table: `FROM apps`, `UPDATE apps`, `.from(apps)`, `.update(apps)`, `apps.id`… */
function mentions(text: string, table: { exportName: string; sqlName: string }): string[] {
  const sql = new RegExp(`\\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\\s+["\`]?${table.sqlName}\\b`, "g");
  const drizzle = new RegExp(`\\.(?:from|update|insert|delete|innerJoin|leftJoin|rightJoin|fullJoin)\\(\\s*${table.exportName}\\b`, "g");
  return [...text.matchAll(sql), ...text.matchAll(drizzle)].map((m) => m[0]);
}

const path = (key: string) => key.replace(/^(\.\.\/)+/, "");
const owns = (owner: string, file: string) => (owner.endsWith("/") ? file.startsWith(owner) : file === owner);

describe("table owners", () => {
  it("knows an owner for every table of the schema", () => {
    expect(tables.length).toBeGreaterThan(5);
    expect(tables.map((t) => t.sqlName).filter((name) => !(name in TABLE_OWNERS))).toEqual([]);
  });

  it("finds the source files and sees a table named in SQL and in drizzle", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(50);
    const apps = { exportName: "apps", sqlName: "apps" };
    expect(mentions("db.update(apps).set({})", apps)).toHaveLength(1);
    expect(mentions("UPDATE apps SET x = 1", apps)).toHaveLength(1);
    expect(mentions("SELECT 1 FROM apps WHERE", apps)).toHaveLength(1);
    expect(mentions("getApp(env, id); appsDomain", apps)).toHaveLength(0);
  });

  it("names each table only in its owner", () => {
    const strays: string[] = [];
    for (const [key, text] of Object.entries(sources)) {
      const file = path(key);
      if (file === "src/db/schema.ts" || file.startsWith("src/db/tables/")) continue;
      for (const table of tables) {
        if (owns(TABLE_OWNERS[table.sqlName]!, file)) continue;
        for (const hit of mentions(text, table)) strays.push(`${file}: ${hit}`);
      }
    }
    expect(strays).toEqual([]);
  });
});
