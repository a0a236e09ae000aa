/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";

// Imports point down (README, Layout): a file may import its own folder and the layers below its
// own, never a layer above. Folders of one layer may import each other. `config.ts` gathers every
// folder's settings, so it stands outside the order: any layer above `db` may import it.

/** The layers, lowest first: each entry names the top-level folders (or files) of src/ in it. */
export const LAYERS: readonly (readonly string[])[] = [
  ["lib"],
  ["db"],
  ["runtime", "source", "databases", "http"],
  ["apps", "billing", "envvars", "domains", "notifications", "metrics", "logs", "exports", "webhooks", "auth", "audit", "routing"],
  ["api", "console", "admin"],
  ["app"],
  ["index"],
];

/** Outside the order; the command-line client (src/cli) is its own program and imports nothing of the Worker. */
const UNRANKED = ["config", "env", "cli"];

const sources = import.meta.glob("../../src/**/*.{ts,tsx}", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

/** `src/apps/store.ts` -> `apps`; `src/index.ts` -> `index`. */
export function unitOf(file: string): string {
  return file.split("/")[1]!.replace(/(\.d)?\.tsx?$/, "");
}

/** The layer of a unit, or -1 for one outside the order. */
export function layerOf(unit: string): number {
  return LAYERS.findIndex((layer) => layer.includes(unit));
}

/** Resolves a relative specifier against the importing file's folder (paths as `src/...`). */
export function resolve(from: string, specifier: string): string {
  const parts = from.split("/").slice(0, -1);
  for (const segment of specifier.split("/")) {
    if (segment === "..") parts.pop();
    else if (segment !== ".") parts.push(segment);
  }
  return parts.join("/");
}

/** Every relative module a source names: static imports, re-exports and dynamic `import()`. */
export function importsOf(text: string): string[] {
  const found = text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm);
  return [...found].map((m) => m[1]!);
}

/** Why an import from `from` to `to` breaks the order, or null when it may stand. */
export function layerProblem(from: string, to: string): string | null {
  const a = unitOf(from);
  const b = unitOf(to);
  if (a === b || UNRANKED.includes(a)) return null;
  const fromLayer = layerOf(a);
  const toLayer = layerOf(b);
  if (fromLayer < 0) return `${a} is in no layer: add it to LAYERS`;
  if (toLayer < 0) return fromLayer <= 1 ? `${a} (layer ${fromLayer}) imports ${b}, which stands outside the order` : null;
  return toLayer > fromLayer ? `${a} (layer ${fromLayer}) imports ${b} (layer ${toLayer})` : null;
}

const files = Object.entries(sources).map(([key, text]) => ({ file: key.replace(/^(\.\.\/)+/, ""), text }));

describe("layers", () => {
  it.each([
    ["src/db/schema.ts", "src/apps/health", "db (layer 1) imports apps (layer 3)"],
    ["src/db/schema.ts", "src/db/health-columns", null],
    ["src/db/schema.ts", "src/config", "db (layer 1) imports config, which stands outside the order"],
    ["src/lib/sealing.ts", "src/lib/encoding", null],
    ["src/source/context.ts", "src/apps/settings", "source (layer 2) imports apps (layer 3)"],
    ["src/runtime/docker.ts", "src/console/app", "runtime (layer 2) imports console (layer 4)"],
    ["src/databases/service.ts", "src/exports/store", "databases (layer 2) imports exports (layer 3)"],
    ["src/exports/store.ts", "src/databases/records", null],
    ["src/apps/store.ts", "src/billing/ledger", null],
    ["src/apps/store.ts", "src/config", null],
    ["src/config.ts", "src/apps/plans", null],
    ["src/console/app.ts", "src/index", "console (layer 4) imports index (layer 6)"],
    ["src/index.ts", "src/app", null],
  ])("%s importing %s: %s", (from, to, problem) => {
    expect(layerProblem(from, to)).toBe(problem);
  });

  it("reads static, dynamic and re-exported imports", () => {
    const text = 'import { a } from "../db/client";\nexport { b } from "./b";\nimport "./side";\nconst c = await import("../apps/c");\n';
    expect(importsOf(text)).toEqual(["../db/client", "./b", "./side", "../apps/c"]);
    expect(resolve("src/apps/x/y.ts", "../../db/client")).toBe("src/db/client");
  });

  it("sees the source files", () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it("no file in src imports a higher layer", () => {
    const problems = files.flatMap(({ file, text }) =>
      importsOf(text).flatMap((specifier) => {
        const problem = layerProblem(file, resolve(file, specifier));
        return problem ? [`${file} imports "${specifier}": ${problem}`] : [];
      }),
    );
    expect(problems).toEqual([]);
  });
});
