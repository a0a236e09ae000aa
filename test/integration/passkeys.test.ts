import { exports as workerExports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { clientChallenge } from "../../src/auth/passkeys";
import { ConsoleClient, ORIGIN, signedUp } from "./helpers";
import { signedUpPage } from "./console-pages-helpers";

const b64url = (text: string) => btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/** A made-up answer to a challenge: well formed, but no authenticator signed it. */
function forgedAnswer(challenge: string) {
  const clientDataJSON = b64url(JSON.stringify({ type: "webauthn.get", challenge, origin: ORIGIN }));
  return { id: "AAAA", rawId: "AAAA", type: "public-key", clientExtensionResults: {}, response: { clientDataJSON, authenticatorData: "AAAA", signature: "AAAA" } };
}

describe("passkey routes", { timeout: 30_000 }, () => {
  it("offers registration options for the console's host and the signed-in account", async () => {
    const client = await signedUp();
    const options = await client.json("POST", "/console/api/passkeys/register/options", {});
    expect(options.rp).toEqual({ name: "Console", id: "control.test" });
    expect(options.user.name).toMatch(/@example\.com$/);
    expect(options.authenticatorSelection.residentKey).toBe("required");
    expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(await client.json("GET", "/console/api/passkeys")).toEqual({ passkeys: [] });
  });

  it("refuses a registration nobody's authenticator made, naming the field", async () => {
    const client = await signedUp();
    const options = await client.json("POST", "/console/api/passkeys/register/options", {});
    const answer = { ...forgedAnswer(options.challenge), response: { clientDataJSON: forgedAnswer(options.challenge).response.clientDataJSON, attestationObject: "AAAA" } };
    const res = await client.call("POST", "/console/api/passkeys/register", { name: "laptop", response: answer });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/^response: /);
    const missing = await client.call("POST", "/console/api/passkeys/register", { response: answer });
    expect(((await missing.json()) as { error: string }).error).toMatch(/^name: /);
  });

  it("needs a session to list, add or remove passkeys", async () => {
    const anonymous = new ConsoleClient();
    expect((await anonymous.call("GET", "/console/api/passkeys")).status).toBe(401);
    expect((await anonymous.call("POST", "/console/api/passkeys/register/options", {})).status).toBe(401);
    expect((await anonymous.call("DELETE", "/console/api/passkeys/x")).status).toBe(401);
  });

  it("answers a forged sign-in with 401 and no session, and reads the challenge a client answered", async () => {
    const anonymous = new ConsoleClient();
    const options = await anonymous.json("POST", "/console/api/passkeys/signin/options", {});
    expect(options.rpId).toBe("control.test");
    expect(clientChallenge(forgedAnswer(options.challenge))).toBe(options.challenge);
    const res = await anonymous.call("POST", "/console/api/passkeys/signin", { response: forgedAnswer(options.challenge) });
    expect(res.status).toBe(401);
    expect(res.headers.get("Set-Cookie")).toBeNull();
    expect((await anonymous.call("POST", "/console/api/passkeys/signin", { response: "no" })).status).toBe(400);
  });

  it("shows the passkeys section on the profile and the button on the sign-in page, with the script served", async () => {
    const page = await signedUpPage();
    const html = await page.page("/console/profile");
    expect(html).toContain('id="passkeys-heading"');
    expect(html).toContain("No passkeys yet");
    expect(html).toContain('<script src="/console/assets/passkeys.js" defer="">');
    const signIn = await (await workerExports.default.fetch(new Request(`${ORIGIN}/console/signin`))).text();
    expect(signIn).toContain('id="passkey-signin"');
    const script = await workerExports.default.fetch(new Request(`${ORIGIN}/console/assets/passkeys.js`));
    expect(script.headers.get("Content-Type")).toMatch(/^text\/javascript/);
    expect(await script.text()).toContain("/console/api/passkeys");
  });

  it("answers 404 for removing a passkey that is not the account's", async () => {
    const client = await signedUp();
    expect((await client.call("DELETE", "/console/api/passkeys/nope")).status).toBe(404);
  });
});
