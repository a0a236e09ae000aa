import type { EnvVariable } from "./rules";

/**
 * docs/envvars.md, rule 8: merge mode (default) keeps variables absent from the
 * pasted text; replace mode deletes them, after a confirmation that lists them and requires the
 * word `REPLACE`. Pure.
 */

export const PASTE_MODES = ["merge", "replace"] as const;
export type PasteMode = (typeof PASTE_MODES)[number];

/** The word the replace confirmation requires. */
export const REPLACE_WORD = "REPLACE";

/** What a paste does to the saved set, by key (each list sorted). */
export interface EnvDiff {
  added: string[];
  changed: string[];
  removed: string[];
  unchanged: string[];
}

/** The set after a paste, and what changed; `next` keeps the saved order, new keys after it. */
export function applyPaste(current: readonly EnvVariable[], pasted: readonly EnvVariable[], mode: PasteMode): { next: EnvVariable[]; diff: EnvDiff } {
  const incoming = new Map(pasted.map((v) => [v.key, v.value]));
  const saved = new Map(current.map((v) => [v.key, v.value]));
  const diff: EnvDiff = { added: [], changed: [], removed: [], unchanged: [] };
  const next: EnvVariable[] = [];
  for (const { key, value } of current) {
    const replacement = incoming.get(key);
    if (replacement === undefined) {
      if (mode === "replace") diff.removed.push(key);
      else {
        diff.unchanged.push(key);
        next.push({ key, value });
      }
    } else {
      (replacement === value ? diff.unchanged : diff.changed).push(key);
      next.push({ key, value: replacement });
    }
  }
  for (const { key, value } of pasted) {
    if (saved.has(key)) continue;
    diff.added.push(key);
    next.push({ key, value });
  }
  for (const list of Object.values(diff)) list.sort();
  return { next, diff };
}

/** True when two sets hold the same keys with the same values, whatever their order. */
export function sameVariables(a: readonly EnvVariable[], b: readonly EnvVariable[]): boolean {
  if (a.length !== b.length) return false;
  const values = new Map(a.map((v) => [v.key, v.value]));
  return b.every((v) => values.get(v.key) === v.value);
}
