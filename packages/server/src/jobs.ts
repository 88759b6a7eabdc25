import type { SessionInfo, Surface, Task, TaskStore } from "@codemux/core";

/**
 * Makes one session's MCP task store (protocol 2025-11-25; `@codemux/jobs` serves tasks from its job
 * store): the session its tasks belong to, `notify` to send a task's status to that client, and the
 * surface whose tools a task calls.
 */
export type TaskStoreFactory = (context: { session: () => SessionInfo; notify: (task: Task) => void; surface: Surface }) => TaskStore;
