/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { getTableConfig } from "drizzle-orm/sqlite-core";
import * as schema from "../../src/db/schema";

// ARCHITECTURE.md, Table owners: one module owns each table and every other module calls it. A
// file outside a table's owner that names the table in SQL text or in a drizzle query fails here.

/** Table (SQL name) -> the file, or the folder ending in "/", that owns it (the apps store is three files: reads, column writers, a deploy's own record). */
export const TABLE_OWNERS: Record<string, string | string[]> = {
  apps: ["src/apps/store.ts", "src/apps/app-columns.ts"],
  deploys: ["src/apps/store.ts", "src/apps/app-columns.ts", "src/apps/deploy-store.ts"],
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
const owns = (owner: string | string[], file: string) => [owner].flat().some((one) => (one.endsWith("/") ? file.startsWith(one) : file === one));

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

// The controller owns the app's columns (ARCHITECTURE.md): each change has a named writer in the
// files that own the apps table, and only modules under src/apps call them (the AppController, or
// the src/apps module doing that change for it). Any other module asks src/apps.

/** Where a text writes the apps table: `.update(apps)`, `.insert(apps)`, `.delete(apps)`, `UPDATE apps`… */
const writesApps = (text: string) => /\.(?:update|insert|delete)\(\s*apps\b|\b(?:UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+["`]?apps\b/.test(text);

/** The top-level functions of a file and their text (up to the next top-level declaration). */
function topFunctions(text: string): { name: string; exported: boolean; body: string }[] {
  const starts = [...text.matchAll(/^(export )?(?:async )?function (\w+)|^(?:export )?(?:const|interface|type|class) /gm)];
  return starts.flatMap((m, i) => (m[2] ? [{ name: m[2], exported: m[1] !== undefined, body: text.slice(m.index, starts[i + 1]?.index ?? text.length) }] : []));
}

/** The exported functions of a file that write the apps table, directly or through another function of the same file. */
export function appWriters(text: string): string[] {
  const functions = topFunctions(text);
  const writers = new Set(functions.filter((f) => writesApps(f.body)).map((f) => f.name));
  for (let grown = true; grown; ) {
    grown = false;
    for (const f of functions) {
      if (writers.has(f.name) || ![...writers].some((w) => new RegExp(`\\b${w}\\(`).test(f.body))) continue;
      writers.add(f.name);
      grown = true;
    }
  }
  return functions.filter((f) => f.exported && writers.has(f.name)).map((f) => f.name);
}

/** What `file` imports (or re-exports) from `target` (a path under src without extension): the names, or ["*"] for a namespace import. */
export function importedFrom(file: string, text: string, target: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/(?:import|export)\s+(type\s+)?(\{[^}]*\}|\*(?:\s+as\s+\w+)?)\s+from\s+"([^"]+)"/g)) {
    if (!m[3]!.startsWith(".") || m[1]) continue;
    const parts = file.split("/").slice(0, -1);
    for (const step of m[3]!.split("/")) step === ".." ? parts.pop() : step !== "." && parts.push(step);
    if (parts.join("/").replace(/\.tsx?$/, "") !== target) continue;
    if (m[2]!.startsWith("*")) names.push("*");
    else names.push(...m[2]!.slice(1, -1).split(",").map((n) => n.trim()).filter((n) => n && !n.startsWith("type ")).map((n) => n.split(/\s+as\s+/)[0]!));
  }
  return names;
}

describe("app columns", () => {
  const owners = [TABLE_OWNERS.apps!].flat();
  const writers = new Map(owners.map((owner) => [owner.replace(/\.ts$/, ""), appWriters(sources[`../../${owner}`] ?? "")]));

  it("finds the named writers, and an import of one", () => {
    const all = [...writers.values()].flat();
    for (const name of ["switchInstance", "recordLive", "recordStop", "recordHealth", "saveWebhookSecret", "moveInstance", "recordEnvFailure"]) expect(all).toContain(name);
    expect(all).not.toContain("getApp");
    expect(importedFrom("src/routing/x.ts", 'import { moveInstance as m, type AppColumns } from "../apps/app-columns";', "src/apps/app-columns")).toEqual(["moveInstance"]);
    expect(importedFrom("src/routing/x.ts", 'import * as columns from "../apps/app-columns";', "src/apps/app-columns")).toEqual(["*"]);
  });

  it("are written only by modules under src/apps", () => {
    const strays: string[] = [];
    for (const [key, text] of Object.entries(sources)) {
      const file = path(key);
      if (file.startsWith("src/apps/")) continue;
      if (writesApps(text)) strays.push(`${file}: writes the apps table`);
      for (const [target, names] of writers) {
        for (const name of importedFrom(file, text, target)) if (name === "*" || names.includes(name)) strays.push(`${file}: imports ${name} from ${target}`);
      }
    }
    expect(strays).toEqual([]);
  });
});
