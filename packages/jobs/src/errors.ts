import { CodemuxError } from "@codemux/core";

export type JobsErrorCode = "NOT_FOUND" | "QUEUE_FULL" | "CLOSED" | "NO_SAMPLING" | "BAD_RESUME" | "AGENT_FAILED" | "BAD_REQUEST";

/** Base of every error @codemux/jobs raises; `code` is stable for callers to branch on (REST maps QUEUE_FULL to 429, NOT_FOUND to 404). */
export class JobsError extends CodemuxError<JobsErrorCode> {
  static override readonly package = "jobs";
}
