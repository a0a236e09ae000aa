import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      /** The fake forge's address (test/fakes/fake-forge.ts). */
      FORGE_URL: string;
      /** The Cloudflare API test double's base address (test/fakes/fake-cloudflare.ts). */
      CLOUDFLARE_FAKE_URL: string;
      /** The webhook receiver stand-in's address (test/fakes/fake-receiver.ts). */
      RECEIVER_URL: string;
      /** An engine address that takes connections and never answers (vitest.config.ts). */
      SILENT_ENGINE_URL: string;
      /** How many sequences the app controls' model-based test runs (MODEL_RUNS, default 200). */
      MODEL_RUNS: string;
      /** The model's fast-check seed (MODEL_SEED); empty for a fresh one. */
      MODEL_SEED: string;
    }
  }
}
