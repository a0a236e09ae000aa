import { describe, expect, it } from "vitest";
import type { AppRow } from "../../src/apps/store";
import { viewEnvState } from "../../src/apps/views";
import { planPaste } from "../../src/envvars/edit";

// SPEC.md, contract item 7 (paste, merge, replace "after a confirmation listing them and requiring
// the word `REPLACE`"), Errors "Console validation messages" (nothing saved while a row is invalid)
// and item 6 (a failed check leaves the old instance serving; the page says so).

const saved = [
  { key: "KEEP", value: "k" },
  { key: "DROP", value: "d" },
];

describe("planPaste", () => {
  const cases: { name: string; text: string; mode: "merge" | "replace"; confirm?: string; expected: unknown }[] = [
    {
      name: "merge keeps what the paste does not name",
      text: "NEW=1\nKEEP=k",
      mode: "merge",
      expected: { kind: "ready", diff: { added: ["NEW"], changed: [], removed: [], unchanged: ["DROP", "KEEP"] } },
    },
    {
      name: "replace deleting variables without the word needs the confirmation, naming them",
      text: "KEEP=k",
      mode: "replace",
      expected: { kind: "needs_confirmation", removed: ["DROP"] },
    },
    { name: "the word must be exactly REPLACE", text: "KEEP=k", mode: "replace", confirm: "Replace", expected: { kind: "needs_confirmation" } },
    { name: "REPLACE confirms", text: "KEEP=k", mode: "replace", confirm: "REPLACE", expected: { kind: "ready", next: [{ key: "KEEP", value: "k" }] } },
    { name: "replace deleting nothing needs no confirmation", text: "KEEP=k\nDROP=x", mode: "replace", expected: { kind: "ready" } },
    {
      name: "rows that break a rule are reported by line number, all at once",
      text: "# c\nPORT=1\n\nlower=2\nOK=3",
      mode: "merge",
      expected: {
        kind: "invalid",
        errors: [
          { row: 2, key: "PORT", messages: ["PORT is reserved by the platform."] },
          { row: 4, key: "lower", messages: ["Use uppercase letters, digits, and underscores for the key."] },
        ],
      },
    },
    {
      name: "an unreadable line is one error on its line, with no key",
      text: "A=1\nB",
      mode: "merge",
      expected: { kind: "invalid", errors: [{ row: 2, key: "", messages: ["Line 2 cannot be read: write it as KEY=value."] }] },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(planPaste(saved, { text: c.text, mode: c.mode, confirm: c.confirm })).toMatchObject(c.expected as object);
    });
  }
});

describe("viewEnvState", () => {
  const row = (over: Partial<AppRow>) => ({ status: "running", envVersion: 1, envAppliedVersion: 1, envFailure: null, ...over }) as AppRow;
  const failure = (version: number) => ({ version, message: "nothing answered", log: "probing", at: 0 });
  const cases: { name: string; row: AppRow; expected: unknown }[] = [
    { name: "applied", row: row({}), expected: { version: 1, applied_version: 1, applying: false, failure: null } },
    { name: "a running app with a newer saved set is applying", row: row({ envVersion: 2 }), expected: { applying: true, failure: null } },
    { name: "not deployed: only stored", row: row({ status: "not_deployed", envVersion: 2, envAppliedVersion: 0 }), expected: { applying: false, failure: null } },
    { name: "stopped: only stored", row: row({ status: "stopped", envVersion: 2 }), expected: { applying: false } },
    {
      name: "the newest save failed its check: the running instance has the previous set",
      row: row({ envVersion: 2, envFailure: failure(2) }),
      expected: { applying: false, failure: { version: 2, message: "nothing answered", log: "probing" } },
    },
    { name: "a save after a failed one is applying, the failure still shown", row: row({ envVersion: 3, envFailure: failure(2) }), expected: { applying: true, failure: { version: 2 } } },
    { name: "a later set applied (a redeploy) hides the failure", row: row({ envVersion: 2, envAppliedVersion: 2, envFailure: failure(2) }), expected: { applying: false, failure: null } },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(viewEnvState(c.row)).toMatchObject(c.expected as object);
    });
  }
});
