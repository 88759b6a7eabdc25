import { TASKS_EXTENSION, type ClientCapabilities, type ToolResult } from "@codemux/core";
import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  fromJsonSchema,
  type Client,
  type JSONRPCMessage,
  type Progress,
  type Transport,
} from "@modelcontextprotocol/client";
import { randomUUID } from "node:crypto";
import { abortableSleep } from "./backoff";

/** Bounds on a server's suggested poll interval: not hammered faster, not waited on longer. */
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 5_000;
/** Longer than any sane task id; a longer one (the server's own words) is refused before it is sent back. */
const MAX_TASK_ID_CHARS = 256;
/** Questions answered over one task's life at most: past it the task is cancelled as a runaway. */
const MAX_TASK_QUESTIONS = 32;
/** How long the cancellation of an abandoned task may take before the caller is answered anyway. */
const CANCEL_TIMEOUT_MS = 5_000;
/** Any object: the extension's results are not in the SDK's schemas. */
const AnyObject = fromJsonSchema({ type: "object" });

/** Where a 2026-07-28 request carries the client's capabilities. */
export const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";

type Message = JSONRPCMessage & { result?: Record<string, unknown> };

/** What following a task needs of the call it answers. */
export interface FollowOptions {
  /** The call's timeout: time without any change of the task before it is given up (cancelled). */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  onprogress?: ((progress: Progress) => void) | undefined;
  /** The capabilities the call declared (the extension among them): a server refuses its task methods from a client that does not declare it on each (SEP-2663). */
  capabilities?: ClientCapabilities | undefined;
  /** Asks the calling client one of the task's questions (the channel's relay); absent, a question fails the call. */
  ask?: ((request: { method: string; params?: Record<string, unknown> }, signal: AbortSignal) => Promise<Record<string, unknown>>) | undefined;
}

/**
 * A 2026-07-28 server's tasks (the `io.modelcontextprotocol/tasks` extension), followed inside the
 * call that made them: codemux declares the extension on its calls, and a call answered with a task
 * is polled (`tasks/get`) until it ends, its questions relayed to the calling client and answered
 * (`tasks/update`), and cancelled (`tasks/cancel`) when the caller gives up or the call times out.
 * Every client era gets the call's result as if the server had answered at once. The SDK v2 client
 * refuses `resultType: "task"`, so the answer is taken off the transport and handed to the call as a
 * complete result marked with a key only this channel knows (a server cannot forge it).
 */
export class DownstreamTasks {
  readonly #marker = `codemux/downstream-task/${randomUUID()}`;

  /** The capabilities a call to a 2026 server declares: the caller's, and the extension. */
  static declare(capabilities: ClientCapabilities | undefined): ClientCapabilities {
    const extensions = (capabilities?.extensions ?? {}) as Record<string, unknown>;
    return { ...capabilities, extensions: { ...extensions, [TASKS_EXTENSION]: {} } };
  }

  /** Takes task answers off `transport` before the SDK client reads them (called once the client is connected). */
  watch(transport: Transport): void {
    const deliver = transport.onmessage;
    if (!deliver) return;
    transport.onmessage = (message, extra) => {
      const { result } = message as Message;
      if (result?.resultType === "task") (message as Message).result = this.taken(result) as Message["result"];
      deliver(message, extra);
    };
  }

  /** An answer's result as the SDK client is handed it: a task becomes a complete result that carries it (the call lane's answers are taken here too). */
  taken(result: unknown): unknown {
    return (result as Message["result"])?.resultType === "task" ? { resultType: "complete", content: [], _meta: { [this.#marker]: result } } : result;
  }

  /** The task a call's result stands for, when the server answered with one. */
  taskOf(result: ToolResult): Record<string, unknown> | undefined {
    const task = result._meta?.[this.#marker];
    return typeof task === "object" && task !== null ? (task as Record<string, unknown>) : undefined;
  }

  /** Polls the task until it ends: its result, or the error it failed with; cancels it when the caller gives up or it stalls past the timeout. */
  async follow(client: Client, task: Record<string, unknown>, options: FollowOptions): Promise<ToolResult> {
    const taskId = usableTaskId(task);
    const giveUp = new AbortController();
    const stop = () => giveUp.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", stop, { once: true });
    // Given up before it was followed (a task cancelled at once): the server's task is still cancelled below.
    if (options.signal?.aborted) stop();
    const answered = new Set<string>();
    let state = task;
    let changedAt = performance.now();
    let seen = "";
    /** Progress values must grow: one more at each change the caller is told of. */
    let told = 0;
    // Each task method says again what the call declared: a 2026 server reads a client's capabilities from every request.
    const meta = { _meta: { [CLIENT_CAPABILITIES_KEY]: DownstreamTasks.declare(options.capabilities) } };
    const get = async (timeout: number) =>
      (await client.request({ method: "tasks/get", params: { taskId, ...meta } } as never, AnyObject, { timeout, signal: giveUp.signal })) as Record<
        string,
        unknown
      >;
    try {
      // A task made already ended carries no result or error (a CreateTaskResult is a plain Task): tasks/get has them.
      if ((state.status === "completed" && !state.result) || (state.status === "failed" && !state.error)) state = await get(options.timeoutMs);
      for (;;) {
        const status = state.status;
        if (status === "completed") return resultOf(state);
        if (status === "failed") throw failure(state);
        if (status === "cancelled") throw new ProtocolError(-32603, `The server cancelled task ${taskId}${text(state.statusMessage)}.`);
        const mark = `${String(status)} ${String(state.lastUpdatedAt)} ${String(state.statusMessage)}`;
        if (mark !== seen) {
          seen = mark;
          changedAt = performance.now();
          if (typeof state.statusMessage === "string") options.onprogress?.({ progress: ++told, message: state.statusMessage.slice(0, 200) });
        }
        if (status === "input_required") {
          await this.#answer(client, { taskId, requests: state.inputRequests, answered, meta }, { ...options, signal: giveUp.signal });
          // The time a person took to answer is not the task standing still.
          changedAt = performance.now();
        }
        const left = options.timeoutMs - (performance.now() - changedAt);
        if (left <= 0)
          throw new SdkError(SdkErrorCode.RequestTimeout, `Task ${taskId} did not change for ${options.timeoutMs} ms`, { timeout: options.timeoutMs });
        await abortableSleep(Math.min(left, pollInterval(state.pollIntervalMs)), giveUp.signal);
        state = await get(left);
      }
    } catch (error) {
      // Questions still open with the caller end too.
      giveUp.abort(error);
      const ended = state.status === "completed" || state.status === "failed" || state.status === "cancelled";
      // The caller gave up or the task stalled: the server is told, so that nothing keeps running there for no one.
      if (!ended)
        await client
          .request({ method: "tasks/cancel", params: { taskId, ...meta } } as never, AnyObject, { timeout: CANCEL_TIMEOUT_MS })
          .catch(() => undefined);
      throw error;
    } finally {
      options.signal?.removeEventListener("abort", stop);
    }
  }

  /**
   * Hands a server's task to `take` (which makes a task of codemux's own that runs `follow`), checking its id first;
   * when `take` fails (codemux cannot make a task now), the server's task is cancelled, so nothing runs there for no one.
   */
  async handOver(
    client: Client,
    task: Record<string, unknown>,
    {
      capabilities,
      take,
    }: { capabilities: ClientCapabilities | undefined; take: (follow: (options: FollowOptions) => Promise<ToolResult>) => Promise<ToolResult> },
  ): Promise<ToolResult> {
    const taskId = usableTaskId(task);
    try {
      return await take((followOptions) => this.follow(client, task, followOptions));
    } catch (error) {
      const meta = { _meta: { [CLIENT_CAPABILITIES_KEY]: DownstreamTasks.declare(capabilities) } };
      await client.request({ method: "tasks/cancel", params: { taskId, ...meta } } as never, AnyObject, { timeout: CANCEL_TIMEOUT_MS }).catch(() => undefined);
      throw error;
    }
  }

  /** Relays the task's questions not answered yet to the calling client, and sends the answers with one `tasks/update`. */
  async #answer(
    client: Client,
    { taskId, requests, answered, meta }: { taskId: string; requests: unknown; answered: Set<string>; meta: { _meta: Record<string, unknown> } },
    options: FollowOptions & { signal: AbortSignal },
  ): Promise<void> {
    if (typeof requests !== "object" || requests === null) return;
    const open = Object.entries(requests as Record<string, unknown>).filter(([key]) => !answered.has(key));
    if (open.length === 0) return;
    if (answered.size + open.length > MAX_TASK_QUESTIONS) throw new ProtocolError(-32603, `Task ${taskId} asked more than ${MAX_TASK_QUESTIONS} questions.`);
    const { ask } = options;
    if (!ask) throw new ProtocolError(-32603, `Task ${taskId} asks a question, and this call has no client to ask.`);
    const inputResponses: Record<string, unknown> = {};
    // Asked together, as the server asked them: a client sees every open question at once (a task's inputRequests).
    await Promise.all(
      open.map(async ([key, request]) => {
        answered.add(key);
        inputResponses[key] = await ask(request as { method: string }, options.signal);
      }),
    );
    await client.request({ method: "tasks/update", params: { taskId, inputResponses, ...meta } } as never, AnyObject, {
      timeout: options.timeoutMs,
      signal: options.signal,
    });
  }
}

function usableTaskId(task: Record<string, unknown>): string {
  const taskId = task.taskId;
  if (typeof taskId !== "string" || taskId.length === 0 || taskId.length > MAX_TASK_ID_CHARS)
    throw new SdkError(SdkErrorCode.InvalidResult, "Invalid result for tools/call: the server answered with a task without a usable taskId");
  return taskId;
}

function pollInterval(suggested: unknown): number {
  return typeof suggested === "number" && Number.isFinite(suggested) ? Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, suggested)) : 1_000;
}

/** A completed task's result, as the call's own answer (a server that sends none answers with an error result). */
function resultOf(task: Record<string, unknown>): ToolResult {
  const result = task.result as ToolResult | undefined;
  if (typeof result === "object" && result !== null && Array.isArray(result.content)) return result;
  throw new SdkError(SdkErrorCode.InvalidResult, `Invalid result for tools/call: task ${String(task.taskId)} completed without a tool result`);
}

/** A failed task's JSON-RPC error, as the call's own would have been. */
function failure(task: Record<string, unknown>): ProtocolError {
  const error = task.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
  const code = typeof error?.code === "number" && Number.isInteger(error.code) ? error.code : -32603;
  const message = typeof error?.message === "string" ? error.message.slice(0, 2_000) : `Task ${String(task.taskId)} failed.`;
  return new ProtocolError(code, message, error?.data);
}

function text(message: unknown): string {
  return typeof message === "string" && message ? `: ${message.slice(0, 500)}` : "";
}
