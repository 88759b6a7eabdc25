import type { Progress, ToolResult, SessionInfo } from "@codemux/core";
import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import type { Task } from "@modelcontextprotocol/sdk/types.js";

/** Work to run in the background: a snippet or one tool call, as execute_code or call_tool would answer it. */
export interface BackgroundWork {
  kind: "execute_code" | "call_tool" | (string & {});
  /** One line for lists: the tool's name, or the snippet's first line. */
  description: string;
  /** The request as given, for the journal (a snippet's code, a call's name and arguments). */
  request: Record<string, unknown>;
  session: SessionInfo;
  /** Does the work; the signal aborts when the job is cancelled, progress is kept for `jobs` output. */
  run(context: { signal: AbortSignal; progress: (progress: Progress) => void; job: string }): Promise<ToolResult>;
}

/**
 * Runs work in the background and answers at once with a job id (`@codemux/jobs` is the real one).
 * When a core has none, `background: true` is refused with a sentence saying how to turn jobs on.
 */
export interface JobRunner {
  start(work: BackgroundWork): Promise<{ id: string; position?: number }>;
}

/** Makes one session's MCP task store (`@codemux/jobs` serves tasks from its job store); `notify` sends a task's status to that client. */
export type TaskStoreFactory = (context: { session: () => SessionInfo; notify: (task: Task) => void }) => TaskStore;
