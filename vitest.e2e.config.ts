import { defineConfig } from "vitest/config";

/** End-to-end and browser tests: Node talks HTTP to real `wrangler dev` processes. */
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.test.ts", "test/browser/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Each file starts its own wrangler dev; two at a time suits a 2-core machine.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
