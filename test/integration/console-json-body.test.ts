import { describe, expect, it } from "vitest";
import { ConsoleClient, ORIGIN, uniqueEmail } from "./helpers";

/**
 * docs/api.md: a console JSON route reads its body as JSON whatever the Content-Type says (curl's
 * `-d` sends form encoding, fetch's string body `text/plain`), and a body that is not JSON is 400
 * INVALID_REQUEST "The body must be a JSON object.".
 */
describe("console JSON bodies", () => {
  const cases: { type: string | null; label: string }[] = [
    { type: "application/json", label: "application/json" },
    { type: "text/plain;charset=UTF-8", label: "text/plain (fetch's string body)" },
    { type: "application/x-www-form-urlencoded", label: "form encoding (curl -d)" },
    { type: null, label: "no Content-Type" },
  ];
  for (const { type, label } of cases) {
    it(`reads a JSON body sent as ${label}`, async () => {
      const client = new ConsoleClient();
      const body = JSON.stringify({ email: uniqueEmail(), password: "correct horse battery" });
      const headers = new Headers({ Origin: ORIGIN });
      if (type) headers.set("Content-Type", type);
      const res = await client.fetcher.fetch(new Request(`${ORIGIN}/console/api/signup`, { method: "POST", headers, body }));
      expect(res.status).toBe(200);
      const cookie = res.headers.get("Set-Cookie")!;
      client.cookie = cookie.split(";")[0]!;
            const named = await client.fetcher.fetch(
        new Request(`${ORIGIN}/console/api/tokens`, {
          method: "POST",
          headers: { Origin: ORIGIN, Cookie: client.cookie, ...(type ? { "Content-Type": type } : {}) },
          body: JSON.stringify({ name: "from a script" }),
        }),
      );
      expect(named.status).toBe(201);
      expect(((await named.json()) as { name: string }).name).toBe("from a script");
    });
  }

  it("answers a body that is not JSON with 400 naming the body", async () => {
    const res = await new ConsoleClient().call("POST", "/console/api/signup", undefined, { "Content-Type": "application/json" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ success: false, error: "The body must be a JSON object.", code: "INVALID_REQUEST" });
  });
});
