import { availableParallelism } from "node:os";

export const MIB = 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_HARD_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_QUEUE = 50;
export const DEFAULT_MEMORY_LIMIT_BYTES = 64 * MIB;
export const DEFAULT_MAX_OUTPUT_BYTES = MIB;
export const DEFAULT_MAX_RESULT_BYTES = 16 * MIB;
export const DEFAULT_FILENAME = "snippet.ts";
/** Time a worker gets past its deadline to answer before it is terminated. */
export const WORKER_GRACE_MS = 500;

export function defaultWorkerCount(): number {
  return Math.max(1, Math.min(2, availableParallelism()));
}
