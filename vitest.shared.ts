import { configDefaults, defineConfig } from "vitest/config";

/**
 * Test files left out of a run, as paths under the package (`test/install.test.ts`), comma-separated. Only CI's
 * lanes-off pass sets it (.ci/run), for files that make no tool call: they have no lane to switch off.
 */
const skipped = (process.env.CODEMUX_TEST_SKIP ?? "")
  .split(",")
  .map((file) => file.trim())
  .filter(Boolean);

/** Test settings every package shares; a package config only adds what differs. */
export const sharedTestConfig = defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, ...skipped],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
