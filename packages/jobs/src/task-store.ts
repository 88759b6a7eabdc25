import type { Task, TaskStore, ToolResult } from "@codemux/core";
import { JobsError } from "./errors";
import { FOREVER_MS, sessionOf, TASK_POLL_MS, type TaskStoreOptions } from "./task-options";
import type { JobManager } from "./job-manager";
import { jobTaskExtension, type TaskQuestionBoard } from "./task-extension";
import type { JobRecord } from "./types";

const PAGE = 50;
/**
 * MCP tasks (protocol 2025-11-25) served from the job store: a task-augmented tools/call runs as
 * a job, tasks/get, tasks/result, tasks/list and tasks/cancel read and cancel it. One store per
 * session server: tasks belong to its principal, like jobs, and are the same jobs `jobs` output shows.
 */
export function jobTaskStore(manager: JobManager, options: TaskStoreOptions, questions: TaskQuestionBoard): TaskStore {
  const session = sessionOf(options);
  const find = (taskId: string) => manager.get(taskId, session().principal);
  return {
    async createTask({ name, arguments: args }): Promise<Task> {
      await manager.ready();
      const who = session();
      const { surface } = options;
      const { id } = await manager.start({
        kind: "task",
        description: name,
        request: { name, args },
        session: who,
        run: ({ signal, progress }) => surface.callTool(name, args, { session: who, origin: "job", signal, progress }),
      });
      const job = find(id);
      if (!job) throw new JobsError("NOT_FOUND", `Task ${id} vanished as it was made.`);
      if (options.onStatus) {
        const notify = options.onStatus;
        void manager.wait([id], { timeoutMs: FOREVER_MS }).then(() => notify(toTask(job, manager.retentionOf(job))));
      }
      return toTask(job, manager.retentionOf(job));
    },
    async getTask(taskId: string): Promise<Task | undefined> {
      await manager.ready();
      const job = find(taskId);
      return job ? toTask(job, manager.retentionOf(job)) : undefined;
    },
    async taskResult(taskId: string, signal: AbortSignal): Promise<ToolResult> {
      await manager.ready();
      if (!find(taskId)) throw new JobsError("NOT_FOUND", `Task not found: ${taskId}`);
      await manager.wait([taskId], { timeoutMs: FOREVER_MS, signal });
      const job = find(taskId);
      if (!job) throw new JobsError("NOT_FOUND", `Task not found: ${taskId}`);
      const result = await manager.result(job);
      if (result) return result;
      const text = job.status === "cancelled" ? "The task was cancelled." : (job.error ?? `The task ended ${job.status} without a result.`);
      return { content: [{ type: "text", text }], isError: true };
    },
    async cancelTask(taskId: string): Promise<void> {
      await manager.cancel(taskId, session().principal, "task");
    },
    async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
      await manager.ready();
      const all = manager.list(session().principal);
      const start = cursor ? Math.max(0, Number.parseInt(cursor, 10) || 0) : 0;
      const page = all.slice(start, start + PAGE).map((j) => toTask(j, manager.retentionOf(j)));
      return { tasks: page, ...(start + PAGE < all.length ? { nextCursor: String(start + PAGE) } : {}) };
    },
    extension: jobTaskExtension(manager, options, questions),
  };
}

/** A job as an MCP task: queued and running are `working`; an interrupted job `failed`. */
export function toTask(job: JobRecord, ttl: number): Task {
  const status: Task["status"] = job.status === "queued" || job.status === "running" ? "working" : job.status === "interrupted" ? "failed" : job.status;
  const message = job.status === "interrupted" || job.status === "failed" ? job.error : job.progress?.message;
  return {
    taskId: job.id,
    status,
    ttl,
    createdAt: new Date(job.createdAt).toISOString(),
    lastUpdatedAt: new Date(job.endedAt ?? job.startedAt ?? job.createdAt).toISOString(),
    pollInterval: TASK_POLL_MS,
    ...(message ? { statusMessage: message.slice(0, 500) } : {}),
  };
}
