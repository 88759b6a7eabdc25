import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * Test files left out of a run, as paths from the repository's root (`apps/cli/test/install.test.ts`), comma-separated;
 * each suite leaves out those under its own folder. Only CI's lanes-off pass sets it (.ci/run), for files whose promises
 * are not about a call's path.
 */
const root = fileURLToPath(new URL(".", import.meta.url));
const skipped = (process.env.CODEMUX_TEST_SKIP ?? "")
  .split(",")
  .map((file) => relative(process.cwd(), resolve(root, file.trim())))
  .filter((file) => file !== "" && !file.startsWith(".."));

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
