import type { BackgroundWork } from "@codemux/core";
import type { TranscriptWriter } from "./transcript";
import type { JobRecord } from "./types";

/** A job this process runs (or queues). */
export interface LiveJob {
  record: JobRecord;
  work: BackgroundWork;
  controller: AbortController;
  transcript: TranscriptWriter;
  done: Promise<void>;
  resolve: () => void;
  seq: number;
  progressWrittenAt: number;
  /** The session id inner calls carry when the job made its own session (the agent). */
  callSession?: string;
  /** The trace context of the request that started it, when tracing: its span links there. */
  origin: Record<string, string> | undefined;
  /** Set when it came through the shared queue. */
  shared?: boolean;
  /** Taken from the shared queue: BullMQ holds it as this instance's until it ends here, so it cannot be handed back. */
  taken?: boolean;
}
