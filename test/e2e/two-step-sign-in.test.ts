/**
 * Two-step sign-in end to end: a real `wrangler dev`. TOTP is turned on through the JSON routes
 * with a code computed by a TOTP library here, as an authenticator app would; then signing in
 * without a code is 401 TOTP_REQUIRED, with the code 200, and with the same code again 401.
 */
import { Secret, TOTP } from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Worker, startWorker } from "./harness";

let worker: Worker;

beforeAll(async () => {
  worker = await startWorker();
});

afterAll(async () => {
  await worker?.stop();
});

/** A console client keeping its session cookie, sending our own Origin as a browser would. */
function client() {
  let cookie = "";
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> => {
    const res = await fetch(worker.url + path, {
      method,
      headers: { Origin: worker.url, "Content-Type": "application/json", ...(cookie ? { Cookie: cookie } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const set = res.headers.get("Set-Cookie");
    if (set) cookie = set.split(";")[0]!;
    return { status: res.status, json: await res.json() };
  };
}

describe("two-step sign-in on a real Worker", () => {
  it("is turned on with an app's code, then asks for a code, takes it, and refuses it the second time", async () => {
    const email = `two-step-${Date.now()}@example.com`;
    const password = "an e2e passphrase";
    const owner = client();
    expect((await owner("POST", "/console/api/signup", { email, password })).status).toBe(200);

    const setup = await owner("POST", "/console/api/totp/setup");
    expect(setup.status).toBe(200);
    const app = new TOTP({ secret: Secret.fromBase32(setup.json.secret), algorithm: "SHA1", digits: 6, period: 30 });
    expect(setup.json.otpauth_url).toContain(`secret=${setup.json.secret}`);
    const enabled = await owner("POST", "/console/api/totp/enable", { code: app.generate() });
    expect(enabled.status).toBe(200);
    expect(enabled.json.recovery_codes).toHaveLength(10);

    const noCode = await client()("POST", "/console/api/login", { email, password });
    expect(noCode).toMatchObject({ status: 401, json: { success: false, code: "TOTP_REQUIRED" } });

    // The enabling code's step is spent; the app's next code (a step ahead, inside the window) signs in.
    const code = app.generate({ timestamp: Date.now() + 30_000 });
    const signedIn = client();
    expect(await signedIn("POST", "/console/api/login", { email, password, code })).toMatchObject({ status: 200, json: { email } });
    expect((await signedIn("GET", "/console/api/sessions")).json.sessions).toHaveLength(2);

    const replay = await client()("POST", "/console/api/login", { email, password, code });
    expect(replay).toMatchObject({ status: 401, json: { success: false, code: "UNAUTHORIZED" } });
  });
});
