/**
 * The 10,000 most common passwords, refused as new passwords: the first 10,000 entries of the
 * ranked password list that zxcvbn-ts ships (@zxcvbn-ts/language-common, `passwords-common`,
 * most common first; drawn from leaked password sets). Compared in lower case, as the list is.
 * The list is loaded on the first check, not when the Worker starts.
 */

export const COMMON_PASSWORD_COUNT = 10_000;
export const COMMON_PASSWORD_MESSAGE =
  "This password is among the 10,000 most common ones, which are tried first by anyone guessing. Choose another.";

let common: Promise<Set<string>> | undefined;

function commonPasswords(): Promise<Set<string>> {
  // The package's plain JSON list, not its index: the index decompresses every list it ships
  // (several times the CPU of reading this one) when it is loaded.
  common ??= import("@zxcvbn-ts/language-common/src/passwords.json").then(({ default: ranked }) => new Set((ranked as string[]).slice(0, COMMON_PASSWORD_COUNT)));
  return common;
}

/** Whether `password` is among the 10,000 most common (ignoring case). */
export async function isCommonPassword(password: string): Promise<boolean> {
  return (await commonPasswords()).has(password.toLowerCase());
}
