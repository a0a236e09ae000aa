/**
 * Ports owned by the control plane (app isolation, "Ports"): which host port an instance is
 * given. A held port is never given again; a refused one is skipped; the range is gone round so a
 * just-freed port waits as long as possible before it is used again.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { engineKey, pickPort } from "../../src/runtime/ports";

const range = { first: 20000, last: 20004 };

describe("pickPort", () => {
  it.each<[string, number[], number | null, number[], number | null]>([
    ["nothing held, nothing allocated yet: the first port", [], null, [], 20000],
    ["the one after the last allocated", [20000], 20000, [], 20001],
    ["skips held ports", [20001, 20002], 20000, [], 20003],
    ["skips ports the engine refused", [], 20000, [20001], 20002],
    ["wraps round at the end of the range", [20001], 20004, [], 20000],
    ["a freed port is not reused before the rest of the range", [20003], 20003, [], 20004],
    ["the last allocated outside the range starts again at the first", [], 31000, [], 20000],
    ["every port held: none", [20000, 20001, 20002, 20003, 20004], 20002, [], null],
    ["held and refused cover the range: none", [20000, 20001, 20002], 20000, [20003, 20004], null],
  ])("%s", (_name, held, after, refused, expected) => {
    expect(pickPort(range, new Set(held), after, new Set(refused))).toBe(expected);
  });

  it("never gives a held or refused port, stays in the range, and finds one whenever one is free", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1024, max: 65000 }),
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.integer({ min: 0, max: 45 })),
        fc.array(fc.integer({ min: 0, max: 45 })),
        fc.option(fc.integer({ min: 0, max: 45 })),
        (first, width, heldOffsets, refusedOffsets, afterOffset) => {
          const r = { first, last: first + width };
          const held = new Set(heldOffsets.map((o) => first + o));
          const refused = new Set(refusedOffsets.map((o) => first + o));
          const port = pickPort(r, held, afterOffset === null ? null : first + afterOffset, refused);
          const free = Array.from({ length: width + 1 }, (_, i) => first + i).filter((p) => !held.has(p) && !refused.has(p));
          if (free.length === 0) return port === null;
          return port !== null && port >= r.first && port <= r.last && !held.has(port) && !refused.has(port);
        },
      ),
    );
  });
});

describe("engineKey", () => {
  it.each([
    ["http://127.0.0.1:2375", "127.0.0.1:2375"],
    ["https://user:secret@engine.example:2376/", "engine.example:2376"],
    ["http://[::1]:2375", "[::1]:2375"],
  ])("%s is %s, never its credentials", (url, key) => expect(engineKey(url)).toBe(key));
});
