import { describe, expect, it } from "vitest";
import { heldFromAccount, holdEndsAt, subdomainHeldMessage } from "../../src/apps/subdomain-holds";

// No takeover through a freed name: a released subdomain is held for its account alone until the
// hold ends (SUBDOMAIN_HOLD_DAYS after the release).

const DAY = 86_400_000;
const RELEASED = Date.UTC(2026, 10, 1, 12);

describe("a released subdomain", () => {
  it("is held SUBDOMAIN_HOLD_DAYS from its release", () => {
    expect(holdEndsAt(RELEASED, 30)).toBe(RELEASED + 30 * DAY);
    expect(holdEndsAt(RELEASED, 0)).toBe(RELEASED);
  });

  const hold = { accountId: "a", heldUntil: RELEASED + 30 * DAY };
  it.each<[string, typeof hold | undefined, string, number, boolean]>([
    ["no hold", undefined, "b", RELEASED, false],
    ["another account, the day of release", hold, "b", RELEASED, true],
    ["another account, day 29", hold, "b", RELEASED + 29 * DAY, true],
    ["another account, the moment it ends", hold, "b", RELEASED + 30 * DAY, false],
    ["another account, day 31", hold, "b", RELEASED + 31 * DAY, false],
    ["the account that released it", hold, "a", RELEASED, false],
  ])("%s: held from that account %s", (_name, h, account, now, held) => {
    expect(heldFromAccount(h, account, now)).toBe(held);
  });

  it("says until when, and to choose another", () => {
    expect(subdomainHeldMessage(RELEASED + 30 * DAY)).toBe("This subdomain was released by its previous owner and is reserved for them until 2026-12-01. Choose another.");
  });
});
