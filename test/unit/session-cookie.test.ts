import { describe, expect, it } from "vitest";
import { sessionCookieName, sessionSetCookie } from "../../src/auth/session-cookie";

// Issue 20, "Also": the console's session cookie uses the `__Host-` prefix where it is served over
// https (Secure, Path=/, no Domain), so no app hostname can plant one; over plain http it is
// `session`, which browsers accept without Secure.

describe("session cookie", () => {
  it.each<[string, boolean, string]>([
    ["https", true, "__Host-session"],
    ["plain http", false, "session"],
  ])("over %s it is named %s", (_, https, name) => {
    expect(sessionCookieName(https)).toBe(name);
    expect(sessionSetCookie(https, "v", 60).split(";")[0]).toBe(`${name}=v`);
  });

  it.each<[string, boolean, number, string[], string[]]>([
    ["https sets", true, 604800, ["__Host-session=abc", "Max-Age=604800", "Path=/", "HttpOnly", "Secure", "SameSite=Lax"], ["Domain"]],
    ["https clears", true, 0, ["__Host-session=", "Max-Age=0", "Path=/", "Secure"], ["Domain"]],
    ["http sets", false, 604800, ["session=abc", "Max-Age=604800", "Path=/", "HttpOnly", "SameSite=Lax"], ["Domain", "Secure", "__Host-"]],
    ["http clears", false, 0, ["session=", "Max-Age=0", "Path=/"], ["Domain", "Secure"]],
  ])("%s: %j, never %j", (_, https, maxAge, present, absent) => {
    const header = sessionSetCookie(https, maxAge === 0 ? "" : "abc", maxAge);
    const parts = header.split(/;\s*/);
    for (const part of present) expect(parts).toContain(part);
    for (const word of absent) expect(header).not.toContain(word);
  });
});
