import type { SessionInfo, Surface, Task } from "@codemux/core";

/** How often a client should poll tasks/get. */
export const TASK_POLL_MS = 500;
/** The longest timer Node keeps: a wait that lasts as long as its task or its client does. */
export const FOREVER_MS = 2 ** 31 - 1;

export interface TaskStoreOptions {
  /** The surface whose tools a task calls (the session's mode). */
  surface: Surface;
  /** The session the tasks belong to (its principal owns them); a function when it is made after the server. */
  session: SessionInfo | (() => SessionInfo);
  /** Told when a task ends, for `notifications/tasks/status` (e.g. `(task) => server.notification({ method: "notifications/tasks/status", params: task })`). */
  onStatus?: (task: Task) => void;
}

/** The session a store's tasks belong to, read when asked (it may be made after the store). */
export function sessionOf(options: Pick<TaskStoreOptions, "session">): () => SessionInfo {
  return () => (typeof options.session === "function" ? options.session() : options.session);
}
