import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONSOLE_BUNDLE, consoleBundleModule } from "../../scripts/build-console-script";

// The console serves its browser script from a generated module (the CSP allows only its own
// script files); it must be what the TypeScript source under src/console/client builds to.
describe("console script bundle", () => {
  it("is up to date with its source (else run npm run build:console)", async () => {
    expect(readFileSync(CONSOLE_BUNDLE, "utf8")).toBe(await consoleBundleModule());
  });
});
