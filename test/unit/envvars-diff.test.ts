import { describe, expect, it } from "vitest";
import { applyPaste, sameVariables } from "../../src/envvars/diff";

// SPEC.md, app deployment contract item 7: "Merge mode (default) keeps variables absent from the
// pasted text; replace mode deletes them after a confirmation listing them and requiring the word
// `REPLACE`." Item 6: "Saving identical content changes nothing."

const saved = [
  { key: "A", value: "1" },
  { key: "B", value: "2" },
  { key: "C", value: "3" },
];
const pasted = [
  { key: "B", value: "2" },
  { key: "C", value: "30" },
  { key: "D", value: "4" },
];

describe("applyPaste", () => {
  it("merge keeps variables absent from the paste", () => {
    expect(applyPaste(saved, pasted, "merge")).toEqual({
      next: [
        { key: "A", value: "1" },
        { key: "B", value: "2" },
        { key: "C", value: "30" },
        { key: "D", value: "4" },
      ],
      diff: { added: ["D"], changed: ["C"], removed: [], unchanged: ["A", "B"] },
    });
  });

  it("replace deletes variables absent from the paste and lists them as removed", () => {
    expect(applyPaste(saved, pasted, "replace")).toEqual({
      next: [
        { key: "B", value: "2" },
        { key: "C", value: "30" },
        { key: "D", value: "4" },
      ],
      diff: { added: ["D"], changed: ["C"], removed: ["A"], unchanged: ["B"] },
    });
  });

  it.each(["merge", "replace"] as const)("%s of an empty paste into an empty set changes nothing", (mode) => {
    expect(applyPaste([], [], mode)).toEqual({ next: [], diff: { added: [], changed: [], removed: [], unchanged: [] } });
  });

  it("replace with an empty paste removes everything", () => {
    expect(applyPaste(saved, [], "replace").diff.removed).toEqual(["A", "B", "C"]);
  });
});

describe("sameVariables", () => {
  it.each<[string, { key: string; value: string }[], boolean]>([
    ["the same set in another order", [...saved].reverse(), true],
    ["one value differs", [{ key: "A", value: "1" }, { key: "B", value: "2" }, { key: "C", value: "x" }], false],
    ["one variable fewer", saved.slice(1), false],
  ])("%s", (_, other, same) => {
    expect(sameVariables(saved, other)).toBe(same);
  });
});
