import { describe, expect, it } from "vitest";
import { ADD_REFUSALS, MAX_DOMAINS_PER_APP, addRefusal, planChangeRefusal } from "../../src/domains/refusals";

// SPEC.md States "Custom domain", add domain: "app deployed and running; plan permits custom
// domains; fewer than 3 domains on the app". Limits "Custom domains": up to 3 per app; available
// on the Starter plan and above. Issue 15: each refusal has its own code and sentence.

describe("addRefusal", () => {
  const ok = { appStatus: "running" as const, plan: "starter", domainCount: 0, hostnameTaken: false };
  it.each([
    ["running starter app, no domains", ok, null],
    ["pro plan, two domains", { ...ok, plan: "pro", domainCount: 2 }, null],
    ["never deployed", { ...ok, appStatus: "not_deployed" as const }, "APP_NOT_RUNNING"],
    ["stopped", { ...ok, appStatus: "stopped" as const }, "APP_NOT_RUNNING"],
    ["failed first deploy", { ...ok, appStatus: "failed" as const }, "APP_NOT_RUNNING"],
    ["lite plan", { ...ok, plan: "lite" }, "PLAN_REQUIRED"],
    ["unknown plan", { ...ok, plan: "gold" }, "PLAN_REQUIRED"],
    ["three domains already", { ...ok, domainCount: 3 }, "DOMAIN_LIMIT"],
    ["hostname mapped elsewhere", { ...ok, hostnameTaken: true }, "DOMAIN_TAKEN"],
    ["stopped lite app: running is checked first", { ...ok, appStatus: "stopped" as const, plan: "lite" }, "APP_NOT_RUNNING"],
    ["lite app at the limit: plan before count", { ...ok, plan: "lite", domainCount: 3 }, "PLAN_REQUIRED"],
    ["at the limit and taken: count before taken", { ...ok, domainCount: 3, hostnameTaken: true }, "DOMAIN_LIMIT"],
  ] as const)("%s", (_name, input, code) => {
    const refusal = addRefusal(input);
    expect(refusal?.code ?? null).toBe(code);
    if (code) expect(refusal?.message).toBe(ADD_REFUSALS[code]);
  });

  it("uses the issue's exact sentences and does not say whose a taken hostname is", () => {
    expect(MAX_DOMAINS_PER_APP).toBe(3);
    expect(ADD_REFUSALS.PLAN_REQUIRED).toBe("Custom domains are available on the Starter plan and above.");
    expect(ADD_REFUSALS.DOMAIN_LIMIT).toBe("An app can have up to 3 custom domains.");
    expect(ADD_REFUSALS.DOMAIN_TAKEN).not.toMatch(/account|app |owner|another user/i);
  });
});

describe("planChangeRefusal", () => {
  it.each<[string, string[], string | null]>([
    ["lite", [], null],
    ["starter", ["shop.example.com"], null],
    ["pro", ["a.example.com", "b.example.com"], null],
    ["lite", ["shop.example.com"], "The Lite plan has no custom domains. Remove this custom domain first: shop.example.com."],
    ["lite", ["a.example.com", "b.example.com"], "The Lite plan has no custom domains. Remove these custom domains first: a.example.com and b.example.com."],
    ["lite", ["a.example.com", "b.example.com", "c.example.com"], "The Lite plan has no custom domains. Remove these custom domains first: a.example.com, b.example.com and c.example.com."],
  ])("%s with %j", (plan, hostnames, message) => {
    const refusal = planChangeRefusal(plan, hostnames);
    expect(refusal).toEqual(message === null ? null : { code: "PLAN_REQUIRED", message });
  });
});
