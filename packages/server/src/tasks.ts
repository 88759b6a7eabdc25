import type { TaskStore } from "@codemux/core";
import { ProtocolError, ProtocolErrorCode, RELATED_TASK_META_KEY, type Server } from "@modelcontextprotocol/server";
import { z } from "zod";

const TERMINAL = new Set(["completed", "failed", "cancelled"]);
const TaskIdParams = z.looseObject({ taskId: z.string() });
const ListParams = z.looseObject({ cursor: z.string().optional() }).optional();

/** The capability a session with tasks declares (protocol 2025-11-25): tasks for tools/call, listable and cancellable. */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/**
 * Serves `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` (protocol 2025-11-25) from a
 * session's task store, answering as SDK 1.x's own task handlers did (SDK v2 has no task store).
 */
export function serveTasks(server: Server, store: TaskStore): void {
  const found = async (taskId: string, message: string) => {
    const task = await store.getTask(taskId);
    if (!task) throw new ProtocolError(ProtocolErrorCode.InvalidParams, message);
    return task;
  };
  server.setRequestHandler("tasks/get", { params: TaskIdParams }, async ({ taskId }) => found(taskId, "Failed to retrieve task: Task not found"));
  server.setRequestHandler("tasks/result", { params: TaskIdParams }, async ({ taskId }, ctx) => {
    await found(taskId, `Task not found: ${taskId}`);
    const result = await store.taskResult(taskId, ctx.mcpReq.signal);
    return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
  });
  server.setRequestHandler("tasks/list", { params: ListParams }, async (params) => {
    try {
      const { tasks, nextCursor } = await store.listTasks(params?.cursor);
      return { tasks, nextCursor, _meta: {} };
    } catch (error) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to list tasks: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  server.setRequestHandler("tasks/cancel", { params: TaskIdParams }, async ({ taskId }) => {
    const task = await found(taskId, `Task not found: ${taskId}`);
    if (TERMINAL.has(task.status)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${task.status}`);
    try {
      await store.cancelTask(taskId);
    } catch (error) {
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `Failed to cancel task: ${error instanceof Error ? error.message : String(error)}`);
    }
    return { _meta: {}, ...(await found(taskId, `Task not found after cancellation: ${taskId}`)) };
  });
}
