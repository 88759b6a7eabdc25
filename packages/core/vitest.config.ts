import { defineConfig, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared";

// The public generics' type tests (*.test-d.ts) run with the rest: vitest type-checks them with tsc.
export default mergeConfig(sharedTestConfig, defineConfig({ test: { typecheck: { enabled: true, include: ["src/**/*.test-d.ts"] } } }));
