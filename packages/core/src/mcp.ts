/**
 * The MCP shapes codemux's contracts speak of, written out here so that no contract depends on one
 * SDK line: structurally the protocol's own (2025-11-25), open to fields a later revision adds.
 */

type Open = { [key: string]: unknown };

export interface TextContent extends Open {
  type: "text";
  text: string;
}
export interface ImageContent extends Open {
  type: "image";
  data: string;
  mimeType: string;
}
export interface AudioContent extends Open {
  type: "audio";
  data: string;
  mimeType: string;
}
export interface ResourceLink extends Open {
  type: "resource_link";
  uri: string;
  name: string;
  description?: string;
  mimeType?: string;
}
// Type aliases, not interfaces, and closed: `"text" in contents` then tells the two apart.
export type TextResourceContents = { uri: string; mimeType?: string; text: string; _meta?: Record<string, unknown> };
export type BlobResourceContents = { uri: string; mimeType?: string; blob: string; _meta?: Record<string, unknown> };
export type ResourceContents = TextResourceContents | BlobResourceContents;
export interface EmbeddedResource extends Open {
  type: "resource";
  resource: ResourceContents;
}
/** One part of a tool result's `content`. */
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;

/** A tool's answer (`tools/call` result). */
export interface ToolResult extends Open {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** One question a 2026-07-28 server asks in an `input_required` answer: a request its client would answer (elicitation, sampling, roots). */
export interface InputRequest extends Open {
  method: string;
  params?: Record<string, unknown>;
}

/**
 * A 2026-07-28 server's answer that it needs input before it can answer (multi-round-trip requests):
 * its questions under keys of its own, and state to echo byte for byte on the retry. The pool hands it
 * back as a tool result with empty content, and only to a caller that takes such answers itself.
 */
export interface InputRequiredResult extends ToolResult {
  resultType: "input_required";
  inputRequests?: Record<string, InputRequest>;
  requestState?: string;
}

/** What a retry of a call that answered `input_required` carries: the answers under the server's keys, and its state echoed. */
export interface InputRound {
  inputResponses?: Record<string, unknown>;
  requestState?: string;
}

/** A client's retry of a call that answered `input_required`, as codemux resumes it: the round for its call of `tool` (`server__tool`). */
export interface InputResume extends InputRound {
  tool: string;
}

/** A progress report of a request under way. */
export interface Progress extends Open {
  progress: number;
  total?: number;
  message?: string;
}

/** What a client declared it can do (`sampling`, `elicitation`, `roots`, ...), as it declared it. */
export type ClientCapabilities = Open & {
  sampling?: Open;
  elicitation?: Open;
  roots?: Open & { listChanged?: boolean };
};

/** The result of asking a client's user (`elicitation/create`). */
export interface ElicitResult extends Open {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, string | number | boolean | string[]>;
}
/** The result of sampling a client's model (`sampling/createMessage`). */
export interface CreateMessageResult extends Open {
  role: "user" | "assistant";
  model: string;
  /** One part (text, image, audio) or, with tools, several (tool uses among them). */
  content: ContentBlock | (Open & { type: string }) | Array<ContentBlock | (Open & { type: string })>;
}
/** A client's roots (`roots/list`). */
export interface ListRootsResult extends Open {
  roots: Array<Open & { uri: string; name?: string }>;
}

/** An MCP task (protocol 2025-11-25), as `tasks/get` shows it. */
export interface Task extends Open {
  taskId: string;
  status: "working" | "input_required" | "completed" | "failed" | "cancelled";
  /** Milliseconds the task is kept after it is made; null for no limit. */
  ttl: number | null;
  createdAt: string;
  lastUpdatedAt: string;
  pollInterval?: number;
  statusMessage?: string;
}

/**
 * One session's MCP tasks (protocol 2025-11-25): what a task-augmented `tools/call`, `tasks/get`,
 * `tasks/result`, `tasks/list` and `tasks/cancel` need, written without any SDK's task API (SDK v2
 * has none), so the serving side registers the methods itself.
 */
export interface TaskStore {
  /** Starts a `tools/call` as a task and answers with it at once. */
  createTask(call: { name: string; arguments: Record<string, unknown> }): Promise<Task>;
  /** The task, or undefined when it is not this session's principal's (or gone). */
  getTask(taskId: string): Promise<Task | undefined>;
  /** Waits until the task has ended (or the signal aborts), then its result. */
  taskResult(taskId: string, signal: AbortSignal): Promise<ToolResult>;
  /** Cancels a task that has not ended. */
  cancelTask(taskId: string): Promise<void>;
  listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }>;
  /** The same jobs as tasks of the 2026-07-28 Tasks extension, for that era's clients that declare it. */
  extension?: TaskExtensionStore;
}

/** One question a task waits on (`elicitation/create`, `sampling/createMessage` or `roots/list`), as `tasks/get` shows it. */
export interface TaskInputRequest {
  method: string;
  params?: Record<string, unknown>;
}

/** A task of the extension, as a `CreateTaskResult` carries it (flat, `ttlMs` and `pollIntervalMs`). */
export interface ExtensionTask {
  taskId: string;
  status: "working" | "input_required" | "completed" | "failed" | "cancelled";
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** Milliseconds the task is kept after it is made; null for no limit. */
  ttlMs: number | null;
  pollIntervalMs?: number;
}

/** A task as `tasks/get` answers it: its questions while `input_required`, its result once `completed`, its JSON-RPC error once `failed`. */
export interface DetailedTask extends ExtensionTask {
  inputRequests?: Record<string, TaskInputRequest>;
  result?: ToolResult;
  error?: { code: number; message: string };
}

/**
 * One session's tasks of the extension (protocol 2026-07-28): each method acts only on tasks of the
 * session's principal; another principal's task is answered as missing (undefined or false).
 */
export interface TaskExtensionStore {
  /** Starts a `tools/call` as a task, durable before it resolves; its questions go to the task (the request's capabilities say which it may ask). */
  createTask(call: { name: string; arguments: Record<string, unknown>; capabilities: ClientCapabilities | undefined }): Promise<ExtensionTask>;
  getTask(taskId: string): Promise<DetailedTask | undefined>;
  /**
   * Answers the task's open questions by key (unknown and answered keys are ignored); false when the task is not the
   * principal's; `{ runsOn }` when another instance or process runs it (its questions live there, so nothing is answered).
   */
  updateTask(taskId: string, inputResponses: Record<string, unknown>): Promise<boolean | { runsOn: string }>;
  /** Asks the task to stop; false when the task is not the principal's. */
  cancelTask(taskId: string): Promise<boolean>;
  /**
   * Makes a task that runs `run` (a downstream server's task, followed to its end), durable before it resolves;
   * its questions go to the task as `createTask`'s do.
   */
  followTask?(call: { name: string; arguments: Record<string, unknown>; capabilities: ClientCapabilities | undefined; run: TaskRun }): Promise<ExtensionTask>;
}

/**
 * The client on the other end of a session, for requests that go to it (asking the user, sampling the
 * client's model, its roots). Each method rejects when the client did not declare the capability.
 */
export interface ClientPeer {
  /**
   * `modern` for a 2026-07-28 client, to which a server sends no requests: a question during its call
   * goes back to it as that call's `input_required` answer. Requests are pushed to it otherwise.
   */
  readonly era?: "legacy" | "modern";
  capabilities(): ClientCapabilities | undefined;
  elicit(params: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<ElicitResult>;
  createMessage(params: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<CreateMessageResult>;
  listRoots(options?: { signal?: AbortSignal }): Promise<ListRootsResult>;
}

/** What runs inside a task codemux made: its signal (the task's cancel), its progress, and the client its questions go to (the task's). */
export interface TaskRunContext {
  signal: AbortSignal;
  progress: (progress: Progress) => void;
  peer: ClientPeer;
}

/** The work of a task codemux made for a downstream server's task: follows it to its result. */
export type TaskRun = (task: TaskRunContext) => Promise<ToolResult>;

/**
 * How a call treats a 2026-07-28 server's task (the Tasks extension): absent, codemux declares the extension and
 * follows the task inside the call; `take` hands it to a task of codemux's own (`follow` runs it to the end, with
 * the task's signal, progress and questions); `undeclared` sends the call without the extension (a server that needs
 * it answers -32021).
 */
export type DownstreamTaskHandling =
  | {
      take: (
        follow: (task: {
          signal: AbortSignal;
          onprogress: (progress: Progress) => void;
          ask: (request: { method: string; params?: Record<string, unknown> }, signal: AbortSignal) => Promise<Record<string, unknown>>;
        }) => Promise<ToolResult>,
      ) => Promise<ToolResult>;
    }
  | "undeclared";

/** One message of a sampling conversation (`sampling/createMessage`), as a model sees it. */
export interface SamplingMessage extends Open {
  role: "user" | "assistant";
  content: CreateMessageResult["content"];
}
