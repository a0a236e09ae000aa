import { defineConfig } from "vitest/config";

/** End-to-end and browser tests: Node talks HTTP to real `wrangler dev` processes. */
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.test.ts", "test/browser/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Files without settings of their own share one wrangler dev (test/e2e/shared-stack.ts); the
    // others start their own. Two files at a time suits a 2-core machine.
    globalSetup: ["./test/e2e/shared-stack.ts"],
    maxWorkers: 2,
    fileParallelism: true,
  },
});
