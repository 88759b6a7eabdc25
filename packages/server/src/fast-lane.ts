import { isProgressToken } from "@codemux/core";
import { CallToolResultSchema, CancelledNotificationSchema } from "@modelcontextprotocol/core";
import {
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type CallToolRequest,
  type JSONRPCMessage,
  type ServerNotification,
  type Transport,
} from "@modelcontextprotocol/server";
import type { Session } from "./session";

/** What the fast lane has done, for tests and diagnostics. */
export interface FastLane {
  /** tools/call requests answered on the lane (the others went through the SDK Server). */
  readonly calls: number;
}

type Id = string | number;

/**
 * The stdio fast lane for `tools/call`: a well-formed call, after initialize, goes straight from the
 * transport (which already checked it is JSON-RPC, without zod) to the session's handler, skipping
 * the SDK Server's parses of the same message (as a JSON-RPC message, in type guards, as a
 * tools/call, and the result as a CallToolResult). It keeps the SDK's semantics: its own abort
 * signal per request, aborted by `notifications/cancelled` for that id and when the connection
 * closes; no answer once cancelled; progress through the server's `notification`; thrown errors
 * answered as the SDK answers them; a result the SDK would rewrite or refuse goes through the SDK's
 * own CallToolResult check. Anything else (another method, a call before initialize, a task-augmented
 * or related-task call, params the SDK would refuse or normalize) goes to the SDK Server untouched,
 * so its answers are the SDK's own.
 *
 * Call after `server.connect(transport)`: it wraps the handlers the server installed.
 */
export function attachFastLane(session: Session, transport: Transport): FastLane {
  const { server } = session;
  const sdkMessage = transport.onmessage;
  const sdkClose = transport.onclose;
  const inflight = new Map<Id, AbortController>();
  const lane = { calls: 0 };

  const run = (id: Id, params: CallToolRequest["params"]): void => {
    const controller = new AbortController();
    inflight.set(id, controller);
    const { signal } = controller;
    const extra = {
      signal,
      requestId: id,
      sendNotification: async (notification: ServerNotification) => {
        if (signal.aborted) return;
        await server.notification(notification, { relatedRequestId: id });
      },
    };
    // One reaction per call, not a chain of then, catch and finally: the answer is written in the turn its result arrives.
    const sendFailed = (error: unknown) => server.onerror?.(new Error(`Failed to send response: ${error}`));
    const answered = (message: JSONRPCMessage | undefined): void => {
      if (inflight.get(id) === controller) inflight.delete(id);
      if (message === undefined) return;
      try {
        transport.send(message).catch(sendFailed);
      } catch (error) {
        sendFailed(error);
      }
    };
    // The SDK's own error answer, expression for expression (protocol.js _onrequest); a thrown null or undefined answers as an internal error.
    const failed = (error: { code?: unknown; message?: string; data?: unknown } | null | undefined): void =>
      answered(
        signal.aborted
          ? undefined
          : ({
              jsonrpc: "2.0",
              id,
              error: {
                code: Number.isSafeInteger(error?.code) ? error?.code : ProtocolErrorCode.InternalError,
                message: error?.message ?? "Internal error",
                ...(error?.data !== undefined && { data: error.data }),
              },
            } as JSONRPCMessage),
      );
    let called: Promise<unknown>;
    try {
      called = session.callTool(params, extra);
    } catch (error) {
      called = Promise.reject(error);
    }
    called.then((result) => {
      let checked: unknown;
      try {
        checked = checkedResult(result);
      } catch (error) {
        return failed(error as Error);
      }
      answered(signal.aborted ? undefined : ({ result: checked, jsonrpc: "2.0", id } as JSONRPCMessage));
    }, failed);
  };

  transport.onmessage = (message, extra) => {
    const params = server.getClientVersion() === undefined ? undefined : fastCallParams(message);
    if (params !== undefined) {
      lane.calls++;
      run((message as { id: Id }).id, params);
      return;
    }
    if (inflight.size > 0 && (message as { method?: unknown }).method === "notifications/cancelled") cancel(inflight, message);
    sdkMessage?.(message, extra);
  };
  transport.onclose = () => {
    // As the SDK does for its own handlers: every call in flight is aborted when the connection closes.
    for (const controller of inflight.values()) controller.abort();
    inflight.clear();
    sdkClose?.();
  };
  return lane;
}

/** The SDK's handling of a cancellation (its own schema, rare enough not to matter), for the lane's calls. */
function cancel(inflight: Map<Id, AbortController>, message: JSONRPCMessage): void {
  const parsed = CancelledNotificationSchema.safeParse(message);
  if (!parsed.success || !parsed.data.params.requestId) return;
  inflight.get(parsed.data.params.requestId)?.abort(parsed.data.params.reason);
}

/**
 * The params of a tools/call request the lane can take, or undefined. Conservative: only a shape the
 * SDK's CallToolRequestSchema accepts and hands on unchanged; anything else is the SDK's to judge.
 */
export function fastCallParams(message: JSONRPCMessage): CallToolRequest["params"] | undefined {
  const m = message as { method?: unknown; id?: unknown; params?: unknown };
  if (m.method !== "tools/call" || m.id === undefined) return undefined;
  const params = m.params;
  if (!isPlainObject(params)) return undefined;
  if (typeof params.name !== "string" || params.task !== undefined) return undefined;
  const args = params.arguments;
  if (args !== undefined && (!isPlainObject(args) || Object.hasOwn(args, "__proto__"))) return undefined;
  const meta = params._meta;
  if (meta !== undefined) {
    if (!isPlainObject(meta) || meta[RELATED_TASK_META_KEY] !== undefined) return undefined;
    if (meta.progressToken !== undefined && !isProgressToken(meta.progressToken)) return undefined;
  }
  return params as CallToolRequest["params"];
}

const RESULT_KEYS = new Set(["_meta", "content", "structuredContent", "isError"]);

/**
 * The result as the SDK would send it: a result already in the form CallToolResultSchema gives back
 * (text blocks, plain structured content, a plain `_meta`) is laid out in the schema's key order
 * without parsing; anything else goes through the SDK's own check, with its error.
 */
export function checkedResult(result: unknown): unknown {
  return wireResult(result) ?? sdkChecked(result);
}

function sdkChecked(result: unknown): unknown {
  const parsed = CallToolResultSchema.safeParse(result);
  if (!parsed.success)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid tools/call result: ${parsed.error instanceof Error ? parsed.error.message : String(parsed.error)}`,
    );
  return parsed.data;
}

/** The result in the schema's output form when it can be told without parsing, else undefined. */
export function wireResult(result: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(result) || Object.hasOwn(result, "__proto__")) return undefined;
  const { _meta: meta, content, structuredContent, isError } = result;
  if (
    meta !== undefined &&
    (!isPlainObject(meta) || Object.hasOwn(meta, "__proto__") || meta.progressToken !== undefined || meta[RELATED_TASK_META_KEY] !== undefined)
  )
    return undefined;
  if (!Array.isArray(content)) return undefined;
  for (const block of content) if (!isTextBlock(block)) return undefined;
  if (structuredContent !== undefined && (!isPlainObject(structuredContent) || Object.hasOwn(structuredContent, "__proto__"))) return undefined;
  if (isError !== undefined && typeof isError !== "boolean") return undefined;
  // The schema's keys in its order, then the others (it is a loose object), as its parse lays them out.
  const out: Record<string, unknown> = {};
  let known = 1;
  if (meta !== undefined) {
    out._meta = meta;
    known++;
  }
  out.content = content;
  if (structuredContent !== undefined) {
    out.structuredContent = structuredContent;
    known++;
  }
  if (isError !== undefined) {
    out.isError = isError;
    known++;
  }
  const keys = Object.keys(result);
  if (keys.length !== known) for (const key of keys) if (!RESULT_KEYS.has(key)) out[key] = result[key];
  return out;
}

/** `{type: "text", text}` with exactly those keys in that order: what TextContentSchema gives back unchanged. */
function isTextBlock(block: unknown): boolean {
  if (!isPlainObject(block) || block.type !== "text" || typeof block.text !== "string") return false;
  const keys = Object.keys(block);
  return keys.length === 2 && keys[0] === "type";
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  return Object.getPrototypeOf(value) === Object.prototype;
}
