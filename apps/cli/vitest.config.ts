import { defineConfig, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared";

export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    test: {
      // A hang guard, not a measure: a test may start codemux several times, ~0.4 s of CPU each (Node 20 compiling
      // the 5 MB bundle), seconds each under CI's lanes-off pass beside the conformance stream.
      testTimeout: 60_000,
      hookTimeout: 60_000,
    },
  }),
);
