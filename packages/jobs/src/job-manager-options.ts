import type { JobShare, Logger, SessionInfo, SharedSlots } from "@codemux/core";
import type { JobLimits } from "./admission";
import type { JournalRedactor } from "./journal-mask";

export const DEFAULT_MAX_CONCURRENT = 4;
export const DEFAULT_MAX_QUEUED = 50;
/** A job waits this long in the shared queue for an instance with room, by default; then it ends failed, never run. */
export const DEFAULT_MAX_WAIT_MS = 10 * 60 * 1000;
export const DEFAULT_MAX_RUN_MS = 30 * 60 * 1000;

export interface JobManagerOptions {
  /** The journal's folder, `<dataDir>/jobs`. */
  dir: string;
  /** Open the journal at the first `ready()` rather than at once (a process that may be ended before it serves, such as a protocol probe). */
  openLater?: boolean;
  logger?: Logger;
  /** Jobs running at once (all principals; default 4); more wait in the queue. */
  maxConcurrent?: number;
  /** Jobs waiting at most (default 50); past it a start is refused. */
  maxQueued?: number;
  /** Jobs one principal may have waiting; a quarter of `maxQueued` (at least 2) by default. */
  maxQueuedPerPrincipal?: number;
  /** Limits for named principals over the default share: `{ ci: { jobs: 20 } }`. */
  principalLimits?: Record<string, JobLimits>;
  /** Jobs a session's principal may have at once, running or waiting (its policy's `concurrentJobs`); no limit when undefined. */
  jobsAtOnce?: (session: SessionInfo) => number | undefined;
  /**
   * Masks secrets in the journal. Without one the journal keeps only a digest of each request (no
   * arguments, no snippet), and descriptions and progress lines with credentials masked.
   */
  redactor?: JournalRedactor;
  /** How long a finished job stays readable (and its transcript kept; default 7 days). */
  retentionMs?: number;
  /** How long a principal's finished jobs stay (the config's `retention`); `retentionMs` otherwise. */
  retentionFor?: (principal: string) => number | undefined;
  /** Jobs seen by every instance (Redis): status, progress, transcripts and results readable, and cancels obeyed, from any of them. */
  share?: JobShare;
  /** Where `jobsAtOnce` is counted when instances share a store (Redis): a principal's jobs on all of them together; this instance's alone when absent. */
  slots?: SharedSlots;
  /** How long a job waits in the shared queue for an instance with room before it ends failed (default 10 min). */
  maxWaitMs?: number;
  /** How long a running snippet job may wait on tools (default 30 min); its own computing keeps `execute_code`'s timeout. */
  maxRunMs?: number;
  now?: () => number;
}
