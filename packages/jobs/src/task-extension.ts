import type { ClientCapabilities, DetailedTask, ExtensionTask, TaskExtensionStore, TaskRun } from "@codemux/core";
import { JobsError } from "./errors";
import type { JobManager } from "./job-manager";
import { FOREVER_MS, sessionOf, TASK_POLL_MS, type TaskStoreOptions } from "./task-options";
import { TaskQuestions } from "./task-questions";
import { TERMINAL, type JobRecord } from "./types";

/** JSON-RPC's internal error: a task whose call threw (or whose codemux stopped) failed with it. */
const INTERNAL_ERROR = -32603;

/**
 * The questions of the tasks this process runs, by job id, while they run: one for all session
 * servers, since over HTTP each 2026-07-28 request has its own. Read only after the job's owner is checked.
 */
export type TaskQuestionBoard = Map<string, TaskQuestions>;

/**
 * The Tasks extension (protocol 2026-07-28) served from the job store: a `tools/call` the server made
 * a task runs as a job of the caller's principal; `tasks/get` shows it with its questions, result or
 * error; `tasks/update` answers its questions; `tasks/cancel` cancels the job. One store per session
 * server, like the 2025-11-25 one beside it, over the same jobs.
 */
export function jobTaskExtension(manager: JobManager, options: TaskStoreOptions, questions: TaskQuestionBoard): TaskExtensionStore {
  const session = sessionOf(options);
  const detailed = async (job: JobRecord): Promise<DetailedTask> => {
    const task = extensionTask(job, manager.retentionOf(job), questions.get(job.id));
    if (task.status === "input_required") return { ...task, inputRequests: questions.get(job.id)?.open ?? {} };
    if (job.status === "completed" || (job.status === "failed" && (job.result || job.resultRef))) {
      const result = await manager.result(job);
      if (result) return { ...task, status: "completed", result };
    }
    if (task.status === "failed") return { ...task, error: { code: INTERNAL_ERROR, message: job.error ?? `The task ended ${job.status}.` } };
    return task;
  };
  /**
   * Starts `run` as a job of kind `task` of the session's principal, durable before it resolves; its questions wait on the task.
   * `follows`: `run` follows a server's task that already runs, so a job that ends without running it (cancelled while
   * the principal's limits held it in the queue, or its codemux closing first) still runs it, given up at once: that cancels the server's task.
   */
  const start = async (
    { name, arguments: args, capabilities }: { name: string; arguments: Record<string, unknown>; capabilities: ClientCapabilities | undefined },
    run: TaskRun,
    { follows = false }: { follows?: boolean } = {},
  ) => {
    await manager.ready();
    const who = session();
    const asked = new TaskQuestions(capabilities, manager.now);
    const peer = asked.peer();
    let ran = false;
    const { id } = await manager.start({
      kind: "task",
      description: name,
      request: { name, args },
      session: who,
      run: ({ signal, progress }) => {
        ran = true;
        return run({ signal, progress, peer });
      },
    });
    questions.set(id, asked);
    // Questions live while the job runs; its end (or a journal already closed) lets them go.
    void manager
      .wait([id], { timeoutMs: FOREVER_MS })
      .finally(() => {
        questions.delete(id);
        if (follows && !ran) return run({ signal: AbortSignal.abort(), progress: () => undefined, peer });
      })
      .catch(() => undefined);
    const job = manager.get(id, who.principal);
    if (!job) throw new JobsError("NOT_FOUND", `Task ${id} vanished as it was made.`);
    return extensionTask(job, manager.retentionOf(job), asked);
  };
  return {
    createTask(call) {
      // The task's calls ask through the task: a 2026-07-28 client cannot be sent a request, but can answer with tasks/update.
      return start(call, ({ signal, progress, peer }) =>
        options.surface.callTool(call.name, call.arguments, { session: { ...session(), peer }, origin: "job", signal, progress }),
      );
    },
    followTask({ run, ...call }) {
      return start(call, run, { follows: true });
    },
    async getTask(taskId) {
      await manager.ready();
      await manager.refreshForeign();
      const { principal } = session();
      const known = manager.get(taskId, principal);
      // A task another instance runs or ran (Redis) is told by its shared record: finished, or interrupted when that instance is gone.
      if (!known || (!TERMINAL.has(known.status) && !manager.isLocal(taskId))) await manager.refreshShared(principal);
      const job = manager.get(taskId, principal);
      return job ? detailed(job) : undefined;
    },
    async updateTask(taskId, inputResponses) {
      await manager.ready();
      const { principal } = session();
      const asked = questions.get(taskId);
      if (asked && manager.get(taskId, principal)) {
        asked.answer(inputResponses);
        return true;
      }
      // Its questions are not here: another instance (Redis) or process (one folder) may run it, and only that one can take the answers.
      await manager.refreshShared(principal);
      await manager.refreshForeign();
      const job = manager.get(taskId, principal);
      if (!job) return false;
      if (TERMINAL.has(job.status) || manager.isLocal(taskId)) return true;
      return { runsOn: job.instance === undefined ? `process ${job.pid}` : `instance ${job.instance}` };
    },
    async cancelTask(taskId) {
      return (await manager.cancel(taskId, session().principal, "task")) !== undefined;
    },
  };
}

/** A job as a task of the extension: queued and running are `working` (`input_required` while it waits on a question); an interrupted job `failed`. */
export function extensionTask(job: JobRecord, ttlMs: number, asked?: TaskQuestions): ExtensionTask {
  const { status: state } = job;
  const running = state === "queued" || state === "running";
  const waiting = running && asked !== undefined && asked.size > 0;
  const status: ExtensionTask["status"] = waiting
    ? "input_required"
    : state === "queued" || state === "running"
      ? "working"
      : state === "interrupted"
        ? "failed"
        : state;
  const message = waiting
    ? `The task waits for the answer to ${asked.size} question(s): see inputRequests, answer with tasks/update.`
    : job.status === "interrupted" || job.status === "failed"
      ? job.error
      : job.progress?.message;
  const updated = Math.max(job.endedAt ?? job.startedAt ?? job.createdAt, asked?.changedAt ?? 0);
  return {
    taskId: job.id,
    status,
    createdAt: new Date(job.createdAt).toISOString(),
    lastUpdatedAt: new Date(updated).toISOString(),
    ttlMs,
    pollIntervalMs: TASK_POLL_MS,
    ...(message ? { statusMessage: message.slice(0, 500) } : {}),
  };
}
