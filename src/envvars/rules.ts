/**
 * docs/envvars.md, rules 1-3 and their messages: which
 * keys and values a variable may have, and the exact sentence for each problem. Pure.
 */

/** One variable as the editor and the JSON routes carry it. */
export interface EnvVariable {
  key: string;
  value: string;
}

/** A row that cannot be saved: `row` is the index in `variables` (or the line number of a paste). */
export interface RowError {
  row: number;
  key: string;
  messages: string[];
}

/** docs/envvars.md, rule 2: "exactly `PORT`, `PATH`, `HOME`, `HOSTNAME`, `USER`; match is exact". */
export const RESERVED_KEYS: readonly string[] = ["PORT", "PATH", "HOME", "HOSTNAME", "USER"];

/** docs/envvars.md, rule 3: 64 KiB per value, counted in bytes of UTF-8. */
export const MAX_VALUE_BYTES = 64 * 1024;

/** docs/envvars.md, rule 1: uppercase letters, digits and underscores, not starting with a digit. */
const KEY_PATTERN = /^[A-Z_][A-Z0-9_]*$/;

export const INVALID_KEY_MESSAGE = "Use uppercase letters, digits, and underscores for the key.";
export const VALUE_TOO_LARGE_MESSAGE = "This value exceeds the 64 KiB limit.";
/** Ours (the spec names no sentence): the editor sends the whole set, so a key may appear once. */
export const DUPLICATE_KEY_MESSAGE = "This key is already used by another row.";

/** `PORT is reserved by the platform.`: the key as typed, then the spec's sentence. */
export function reservedKeyMessage(key: string): string {
  return `${key} is reserved by the platform.`;
}

export function isValidKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

/** Exact match only, except that a lowercase spelling (`port`, `Path`) also counts, with the key message. */
export function isReservedSpelling(key: string): boolean {
  return RESERVED_KEYS.includes(key.toUpperCase());
}

export function valueBytes(value: string): number {
  return new TextEncoder().encode(value).byteLength;
}

/** Every message for one row, in the order shown: reserved, key, value. Empty when the row is fine. */
export function rowMessages(variable: EnvVariable): string[] {
  const messages: string[] = [];
  if (isReservedSpelling(variable.key)) messages.push(reservedKeyMessage(variable.key));
  if (!isValidKey(variable.key)) messages.push(INVALID_KEY_MESSAGE);
  if (valueBytes(variable.value) > MAX_VALUE_BYTES) messages.push(VALUE_TOO_LARGE_MESSAGE);
  return messages;
}

/**
 * Every problem of a whole set at once (docs/envvars.md, rule 4: every row's messages are shown; nothing is saved
 * while any row is invalid). `rowOf` maps an index to the number shown (a paste's line number).
 */
export function validateVariables(variables: readonly EnvVariable[], rowOf: (index: number) => number = (i) => i): RowError[] {
  const errors: RowError[] = [];
  const seen = new Set<string>();
  variables.forEach((variable, index) => {
    const messages = rowMessages(variable);
    if (seen.has(variable.key) && !messages.includes(INVALID_KEY_MESSAGE)) messages.push(DUPLICATE_KEY_MESSAGE);
    seen.add(variable.key);
    if (messages.length > 0) errors.push({ row: rowOf(index), key: variable.key, messages });
  });
  return errors;
}
