/**
 * What the profile scripts (profile-export, profile-isolate, profile-allocations) share: their
 * `--size`, `--shape` and `--quick` options, and a `wrangler dev` holding one filled database, with
 * the Worker isolate's inspector connected.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type DevServer, generateSecrets, startDevServer } from "../lib/dev-server";
import type { Recipe } from "./dataset";
import { type Inspector, workerInspector } from "./inspector";
import { setLocalTraces } from "./local-traces";
import { parseSize } from "./options";
import { SHAPES, type Shape, recipeOf } from "./shapes";
import { type BenchAccount, createAccount, createDatabase, fillDatabase } from "./worker-client";

/**
 * What to fill the database with: mixed rows of `--size` (default `defaultSize`), or a shape of
 * shapes.ts (a tenth with `--quick`); `flags` are a script's own boolean options, read alongside.
 */
export function profileData(defaultSize: string, flags: string[] = []): { shape: Shape; data: number | Recipe; flags: Set<string> } {
  const own = Object.fromEntries(flags.map((f) => [f, { type: "boolean" as const, default: false }]));
  const { values } = parseArgs({ options: { size: { type: "string", default: defaultSize }, shape: { type: "string", default: "mixed" }, quick: { type: "boolean", default: false }, ...own } });
  const shape = values.shape as Shape;
  if (!(SHAPES as readonly string[]).includes(shape)) throw new Error(`--shape takes ${SHAPES.join(", ")}`);
  const set = new Set(flags.filter((f) => (values as Record<string, unknown>)[f] === true));
  return { shape, data: shape === "mixed" ? parseSize(values.size as string) : recipeOf(shape, values.quick as boolean), flags: set };
}

export interface ProfiledDatabase {
  server: DevServer;
  account: BenchAccount;
  databaseId: string;
  /** Raw bytes of the rows filled in. */
  raw: number;
  devtools: Inspector;
  /** The temporary directory (wrangler's state in `state/`). */
  dir: string;
  /** Stops wrangler and, unless `keepDir`, removes the directory. */
  close(options?: { keepDir?: boolean }): Promise<void>;
}

/** Starts `wrangler dev` (no call limit, no export cooldown), fills one database and connects to the Worker isolate's inspector. */
export async function profiledDatabase(name: string, data: number | Recipe): Promise<ProfiledDatabase> {
  const dir = mkdtempSync(join(tmpdir(), `control-plane-${name}-`));
  setLocalTraces(false); // as in the bench (local-traces.ts)
  const server = await startDevServer({ persistTo: join(dir, "state"), vars: { ...generateSecrets(), EXPORT_COOLDOWN_SECONDS: "0", RATE_LIMIT_PER_MINUTE: "1000000", RATE_LIMIT_BURST: "1000000" } });
  const close = async (options: { keepDir?: boolean } = {}) => {
    await server.stop();
    if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const account = await createAccount(server.url, `${name}@example.com`);
    const databaseId = await createDatabase(account, name);
    const raw = await fillDatabase(account, databaseId, data);
    const devtools = await workerInspector(server);
    return { server, account, databaseId, raw, devtools, dir, close };
  } catch (err) {
    console.error(`wrangler's output:\n${server.output().slice(-4000)}`);
    await close();
    throw err;
  }
}
