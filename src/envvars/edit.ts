import { z } from "zod";
import { type EnvDiff, PASTE_MODES, type PasteMode, REPLACE_WORD, applyPaste } from "./diff";
import { parsePaste } from "./paste";
import { type EnvVariable, type RowError, validateVariables } from "./rules";

/**
 * What the editor sends (the JSON routes and the page forms) and what a paste would do to the saved
 * set, before anything is written. Pure: the routes read the set, ask here, then save through the
 * app's AppController.
 */

const Variable = z.object({ key: z.string(), value: z.string() });
const Version = z.number().int().min(0);

/** `PUT /console/api/apps/{id}/env`: the whole set and the version it was loaded at. */
export const EnvPutRequest = z.object({ version: Version, variables: z.array(Variable) });

/** `POST /console/api/apps/{id}/env/paste`. */
export const EnvPasteRequest = z.object({
  version: Version,
  text: z.string(),
  mode: z.enum(PASTE_MODES).default("merge"),
  confirm: z.string().optional(),
  dry_run: z.boolean().optional(),
});

/** The sentence of a 400 INVALID_ENV; the rows and their messages come with it. */
export const INVALID_ENV_MESSAGE = "Some variables cannot be saved; nothing was saved. Each row's messages say why.";

/** The sentence of a 409 CONFIRMATION_REQUIRED, naming what replace would delete. */
export function confirmationMessage(removed: readonly string[]): string {
  const n = removed.length;
  return `Replace deletes ${n} variable${n === 1 ? "" : "s"} absent from the pasted text (${removed.join(", ")}). Type ${REPLACE_WORD} to confirm.`;
}

export type PastePlan =
  /** A line that cannot be read, or rows that break the rules: nothing may be saved. */
  | { kind: "invalid"; errors: RowError[] }
  /** Replace would delete variables and the confirmation word was not given. */
  | { kind: "needs_confirmation"; removed: string[]; diff: EnvDiff; next: EnvVariable[] }
  | { kind: "ready"; diff: EnvDiff; next: EnvVariable[] };

/**
 * Reads a paste against the saved set: an unreadable line is one error on its line number; rows
 * that break a rule carry their line numbers; replace deleting anything needs `REPLACE`.
 */
export function planPaste(current: readonly EnvVariable[], input: { text: string; mode: PasteMode; confirm?: string }): PastePlan {
  const parsed = parsePaste(input.text);
  if (!parsed.ok) return { kind: "invalid", errors: [{ row: parsed.line, key: "", messages: [parsed.message] }] };
  const errors = validateVariables(parsed.variables, (i) => parsed.variables[i]!.line);
  if (errors.length > 0) return { kind: "invalid", errors };
  const { next, diff } = applyPaste(current, parsed.variables, input.mode);
  if (input.mode === "replace" && diff.removed.length > 0 && input.confirm !== REPLACE_WORD) {
    return { kind: "needs_confirmation", removed: diff.removed, diff, next };
  }
  return { kind: "ready", diff, next };
}
