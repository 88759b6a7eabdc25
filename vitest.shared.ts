import { defineConfig } from "vitest/config";

/** Test settings every package shares; a package config only adds what differs. */
export const sharedTestConfig = defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
