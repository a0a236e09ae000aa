import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      /** The fake forge's address (test/fakes/fake-forge.ts). */
      FORGE_URL: string;
    }
  }
}
