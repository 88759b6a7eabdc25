/** Name of the one global through which a snippet reaches the host: `__host_call(name, args)`. */
export const HOST_CALL_GLOBAL = "__host_call";

/**
 * Globals the sandbox adds to the ECMAScript built-ins, for a tool description to list.
 * (`__host_call` is plumbing for generated modules and is left out.)
 */
export const SANDBOX_GLOBALS = [
  "console",
  "setTimeout",
  "clearTimeout",
  "setInterval",
  "clearInterval",
  "queueMicrotask",
  "structuredClone",
  "URL",
  "URLSearchParams",
  "TextEncoder",
  "TextDecoder",
  "atob",
  "btoa",
] as const;

/**
 * Built-ins of the engine removed before a snippet runs: shared memory reads and writes past its
 * bounds in this QuickJS build, and the others expose the collector or resize memory under live views.
 */
export const REMOVED_GLOBALS = ["SharedArrayBuffer", "Atomics", "WeakRef", "FinalizationRegistry"] as const;
