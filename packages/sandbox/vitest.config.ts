import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared";

// Tests import the package by name and get the build, because the worker entry exists only in dist (turbo builds before test).
export default mergeConfig(
  sharedTestConfig,
  defineConfig({ resolve: { alias: { "@codemux/sandbox": fileURLToPath(new URL("./dist/index.js", import.meta.url)) } } }),
);
