import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PASSKEY_BUNDLE, passkeyBundleModule } from "../../scripts/build-passkey-script";

// The console serves the passkey script from a generated module (the CSP allows only its own
// script files); it must be what the source and the installed @simplewebauthn/browser build to.
describe("passkey script bundle", () => {
  it("is up to date with its source and the library (else run npm run build:passkeys)", async () => {
    expect(readFileSync(PASSKEY_BUNDLE, "utf8")).toBe(await passkeyBundleModule());
  });
});
