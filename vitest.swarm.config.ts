import { defineConfig } from "vitest/config";

/**
 * Tests on throwaway Docker Swarms (scripts/swarm/up.sh; needs root): one file at a time, since
 * each starts its own dockerds on a shared machine.
 */
export default defineConfig({
  test: {
    include: ["test/swarm/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
