import type { ToolResult } from "@codemux/core";

/** `queued` and `running` change; the others are terminal and never change again. */
export type JobStatus = "queued" | "running" | "completed" | "failed" | "cancelled" | "interrupted";
export type TerminalStatus = Exclude<JobStatus, "queued" | "running">;

export const TERMINAL: ReadonlySet<JobStatus> = new Set<JobStatus>(["completed", "failed", "cancelled", "interrupted"]);

/** The last progress a job reported, and how many reports it made. */
export interface JobProgress {
  message?: string;
  progress?: number;
  total?: number;
  updates: number;
}

/** Everything known about one job: what the journal holds, folded. */
export interface JobRecord {
  id: string;
  kind: string;
  description: string;
  principal: string;
  /** The session that started it (result handles in its answer belong to that session). */
  session: string;
  request: Record<string, unknown>;
  /** The process that ran it; recovery leaves jobs of live processes alone. */
  pid: number;
  /** The instance that runs it, when jobs are shared by several instances (Redis). */
  instance?: string;
  /** Waiting in the deployment's shared queue for any instance to take it (the instance that queued it may be gone). */
  inSharedQueue?: boolean;
  /** In the journal of the process that took it from the shared queue: not started there yet, it is handed back at a restart. */
  taken?: boolean;
  createdAt: number;
  startedAt?: number;
  endedAt?: number;
  status: JobStatus;
  progress?: JobProgress;
  /** Downstream and agent tool calls finished, and still running. */
  toolCalls: number;
  inFlight: number;
  result?: ToolResult;
  /** A result too large for the journal line: a file under `<dir>/results/`. */
  resultRef?: string;
  error?: string;
  /** Who cancelled: "tool" (jobs cancel), "cli", "task" (tasks/cancel), "shutdown". */
  by?: string;
}

/** One line of the journal. `t` is the event type; every line names its job and time. */
export type JournalEvent =
  | { t: "segment"; pid: number; startedAt: number }
  | ({ t: "created"; ts: number; taken?: true } & Pick<JobRecord, "id" | "kind" | "description" | "principal" | "session" | "request" | "pid">)
  | { t: "started"; id: string; ts: number }
  /** Handed to the shared queue: another instance may run it, so a restart here does not mark it interrupted. */
  | { t: "handed"; id: string; ts: number }
  | { t: "progress"; id: string; ts: number; progress: JobProgress; toolCalls: number }
  | {
      t: "end";
      id: string;
      ts: number;
      status: "completed" | "failed" | "cancelled" | "interrupted";
      result?: ToolResult;
      resultRef?: string;
      error?: string;
      by?: string;
      toolCalls: number;
      inFlight?: number;
      progress?: JobProgress;
    };
