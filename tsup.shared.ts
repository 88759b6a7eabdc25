import type { Options } from "tsup";

/** The build every package shares: ESM only, types, source maps, Node 20. */
export function packageBuild(overrides: Options = {}): Options {
  return {
    entry: ["src/index.ts"],
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: true,
    sourcemap: true,
    clean: true,
    splitting: false,
    ...overrides,
  };
}
