import { describe, expect, it } from "vitest";
import { type Refusal, orThrow, refusalError, refusalFields, refuse } from "../../src/console/actions/outcome";
import { ApiError } from "../../src/http/errors";

describe("console action refusals: one outcome, read by the JSON routes and by the pages", () => {
  it.each<[string, Refusal, number, string, Record<string, string>]>([
    ["a 400 with a field names it first", refuse("INVALID_REQUEST", "Too common.", "password"), 400, "password: Too common.", { password: "Too common." }],
    ["a 400 without a field is the bare sentence", refuse("INVALID_REQUEST", "Statement 2: no such table: x"), 400, "Statement 2: no such table: x", { _form: "Statement 2: no such table: x" }],
    ["another code keeps the bare sentence, its field for the page only", refuse("CONFLICT", "Taken.", "email"), 409, "Taken.", { email: "Taken." }],
    ["401 for a wrong code", refuse("UNAUTHORIZED", "Wrong code.", "code"), 401, "Wrong code.", { code: "Wrong code." }],
  ])("%s", (_case, refusal, status, message, fields) => {
    const error = refusalError(refusal);
    expect(error).toBeInstanceOf(ApiError);
    expect([error.status, error.code, error.message]).toEqual([status, refusal.code, message]);
    expect(refusalFields(refusal)).toEqual(fields);
  });

  it("keeps a refusal's extra fields for the JSON envelope", () => {
    const error = refusalError({ ...refuse("INVALID_REQUEST", "Give an https:// address.", "url"), extra: { field: "url" } });
    expect([error.message, error.options.extra]).toEqual(["url: Give an https:// address.", { field: "url" }]);
  });

  it("orThrow passes what was done and throws a refusal", () => {
    expect(orThrow({ ok: true, id: "x" })).toEqual({ ok: true, id: "x" });
    expect(() => orThrow(refuse("NOT_FOUND", "No such session."))).toThrow("No such session.");
  });
});
