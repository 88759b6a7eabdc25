import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (where pnpm-workspace.yaml is), found from this file. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "pnpm-workspace.yaml"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("Cannot find the repository root (pnpm-workspace.yaml).");
    dir = parent;
  }
  return dir;
}

/** `../shared/benchmarks` beside the checkout, or $CODEMUX_BENCH_DIR; undefined when absent. */
export function benchmarksDir(): string | undefined {
  const dir = process.env.CODEMUX_BENCH_DIR ?? resolve(repoRoot(), "../shared/benchmarks");
  return existsSync(dir) ? dir : undefined;
}

/** The built CLI the sections run: this checkout's, or $CODEMUX_BENCH_CLI (another build, e.g. to flip which build runs first). */
export function cliPath(): string {
  return process.env.CODEMUX_BENCH_CLI ?? join(repoRoot(), "apps/cli/dist/index.js");
}
