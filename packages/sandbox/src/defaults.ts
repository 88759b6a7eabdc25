import { availableParallelism } from "node:os";

// Every default and budget of the sandbox lives here; the README's threat model lists them.

export const MIB = 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_HARD_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_QUEUE = 50;
export const DEFAULT_MEMORY_LIMIT_BYTES = 64 * MIB;
export const DEFAULT_MAX_OUTPUT_BYTES = MIB;
export const DEFAULT_MAX_RESULT_BYTES = 16 * MIB;
/** Nesting of the default export; deeper values make recursive consumers (JSON.stringify, previews) overflow their stack. */
export const DEFAULT_MAX_RESULT_DEPTH = 256;
/** Largest snippet accepted for bundling, in UTF-8 bytes. */
export const DEFAULT_MAX_CODE_BYTES = MIB;
/** Answers of host calls that one run holds before its guest takes them (UTF-16 units of their JSON). */
export const DEFAULT_MAX_RUN_PENDING_BYTES = 64 * MIB;
/** The same, summed over every run of one Sandbox. */
export const DEFAULT_MAX_TOTAL_PENDING_BYTES = 256 * MIB;
/** The JSON of one host call's arguments. */
export const DEFAULT_MAX_CALL_ARGS_BYTES = 16 * MIB;
/** Longest a snippet may take to bundle; esbuild is slow (minutes) on some deep nestings, and is restarted to stop it. */
export const DEFAULT_BUNDLE_TIMEOUT_MS = 10_000;
/** Bundles built at once; each may hold esbuild's whole error report in memory. */
export const DEFAULT_MAX_CONCURRENT_BUNDLES = 2;
export const DEFAULT_FILENAME = "snippet.ts";
/** Time a worker gets past its deadline to answer before it is terminated. */
export const WORKER_GRACE_MS = 500;

/** Guest stack; small enough that QuickJS reports overflow before V8's own stack under the WASM frames runs out. */
export const MAX_STACK_BYTES = 256 * 1024;
export const MAX_TIMERS = 1_000;
export const MAX_PENDING_CALLS = 1_000;
/** A host call's name; real tool names are far shorter. */
export const MAX_CALL_NAME_LENGTH = 512;
/** An error's message kept from the guest (characters); the rest is cut. */
export const MAX_ERROR_MESSAGE_LENGTH = 4_096;
/** An error's stack kept from the guest (characters) before its frames are mapped. */
export const MAX_ERROR_STACK_LENGTH = 16_384;
/** Stack frames shown in an error. */
export const MAX_STACK_FRAMES = 20;
/** Characters of one stack line that are read for a position. */
export const MAX_FRAME_LINE_LENGTH = 1_024;
/** An import specifier; longer ones are refused before any other work. */
export const MAX_SPECIFIER_LENGTH = 1_024;
/**
 * esbuild reports each error with the whole line it is on, so error text grows with the square of
 * a line's length; the sum over all lines must stay under this many characters (see bundle.ts).
 */
export const MAX_BUNDLE_ERROR_TEXT = 64 * MIB;
/** Brackets nested, or prefix operators in a row, past this are refused before esbuild (which crashes or stalls on deep nesting). */
export const MAX_NESTING_DEPTH = 1_000;
/** Arrow functions in one snippet, at most: a chain of them nests. */
export const MAX_ARROWS = 5_000;
/** Characters of one esbuild message kept in an error. */
export const MAX_BUNDLE_MESSAGE_LENGTH = 2_048;

export function defaultWorkerCount(): number {
  return Math.max(1, Math.min(2, availableParallelism()));
}

/** Where the pool starts its workers; a bundler may point `SandboxOptions.workerUrl` elsewhere. */
export function defaultWorkerUrl(): URL {
  // Run from sources (`pnpm dev:cli`, through tsx) this module is a .ts file, and the worker is a TypeScript one to load through tsx.
  return new URL(import.meta.url.endsWith(".ts") ? "./worker-source.mjs" : "./worker.js", import.meta.url);
}
