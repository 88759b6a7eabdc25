/** The fast path's kept bundle starts with a line saying so (src/sandbox.ts); esbuild's is esbuild's output. */
export const FAST_HEADER = "types stripped; QuickJS links the modules below itself";

/** Which path a run took, from the bundles `onBundle` kept: none (it failed before), fast, or esbuild. */
export function keptPath(kept: string[]): "none" | "fast" | "esbuild" {
  return kept.length === 0 ? "none" : kept.every((bundle) => bundle.includes(FAST_HEADER)) ? "fast" : "esbuild";
}

/** The same snippet forced through esbuild: the fast path leaves any code that mentions require to it. */
export const viaEsbuild = (code: string) => `${code}\n// require`;
