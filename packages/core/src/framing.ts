/** The `_meta` key of a request that belongs to an MCP task (protocol 2025-11-25). */
const RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task";
/** Where a 2026-era server names itself in a result's `_meta` (an SDK v2 server stamps every answer with it). */
const SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo";
const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const RESULT_KEYS = new Set(["jsonrpc", "id", "result"]);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isId = (id: unknown) => typeof id === "string" || Number.isInteger(id);
const onlyKeys = (value: Record<string, unknown>, allowed: Set<string>) => {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
};

/** What MCP takes as a progress token, and as a request id beside a `_meta`: a string or an integer held exactly. */
export const isProgressToken = (value: unknown): value is string | number => typeof value === "string" || Number.isSafeInteger(value);

/**
 * A request's `_meta` a schema would accept unchanged: at most a progress token beside other keys
 * (clients send one with many calls); a related task, an odd token or a `__proto__` key is not plain.
 */
function plainRequestMeta(meta: unknown): boolean {
  if (!isRecord(meta) || Object.hasOwn(meta, "__proto__") || meta[RELATED_TASK_META_KEY] !== undefined) return false;
  return meta.progressToken === undefined || isProgressToken(meta.progressToken);
}

/** A result's `_meta` a schema would accept unchanged: the server's name and version (strings) under its key, nothing else. */
export function plainResultMeta(meta: unknown): boolean {
  if (!isRecord(meta)) return false;
  for (const key in meta) if (key !== SERVER_INFO_META_KEY) return false;
  const info = meta[SERVER_INFO_META_KEY];
  if (!isRecord(info) || typeof info.name !== "string" || typeof info.version !== "string") return false;
  for (const key in info) if (key !== "name" && key !== "version") return false;
  return true;
}

/**
 * A downstream server's answer without the name and version a 2026-era server stamps into its `_meta`: relayed by
 * codemux, the answer is codemux's (its SDK stamps codemux's own for a 2026-07-28 client). The same object when there is none.
 */
export function withoutServerInfo<T extends object>(result: T): T {
  const meta = (result as { _meta?: unknown })._meta;
  if (!isRecord(meta) || !Object.hasOwn(meta, SERVER_INFO_META_KEY)) return result;
  const { [SERVER_INFO_META_KEY]: _downstream, ...rest } = meta;
  const { _meta: _stamped, ...answer } = result as { _meta?: unknown };
  return (Object.keys(rest).length > 0 ? { ...answer, _meta: rest } : answer) as T;
}

/**
 * The part of a schema `jsonRpcMessage` uses (zod's `safeParse`, as the SDK's `JSONRPCMessageSchema`
 * has it): core depends on no schema library, so the caller hands in the protocol's schema.
 */
export interface MessageSchema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false };
}

/**
 * A JSON-RPC message as `schema` takes it, or undefined when it refuses it. The common shapes (a
 * request with at most a progress token in its `_meta`, a notification, a result without `_meta` or
 * with only the server's name and version in it, as a 2026-era server stamps each)
 * are recognized without the schema, which costs more than the rest of a proxied call; they are
 * shapes every MCP message schema accepts unchanged, so what is accepted and refused stays exactly
 * the schema's.
 */
export function jsonRpcMessage<T>(value: unknown, schema: MessageSchema<T>): T | undefined {
  if (plainJsonRpcMessage(value)) return value as T;
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function plainJsonRpcMessage(value: unknown): boolean {
  if (!isRecord(value) || value.jsonrpc !== "2.0") return false;
  if (typeof value.method === "string") {
    const params = value.params;
    const request = "id" in value;
    const plainParams =
      params === undefined || (isRecord(params) && (!("_meta" in params) || (request && isProgressToken(value.id) && plainRequestMeta(params._meta))));
    return plainParams && onlyKeys(value, REQUEST_KEYS) && (!request || isId(value.id));
  }
  const result = value.result;
  return isId(value.id) && isRecord(result) && (!("_meta" in result) || plainResultMeta(result._meta)) && onlyKeys(value, RESULT_KEYS);
}

export interface LineSplitterOptions {
  /** A longer line is dropped (reported through onOversize) and reading resumes at the next newline. */
  maxLineBytes: number;
  onLine: (line: string) => void;
  onOversize?: (bytes: number) => void;
}

// ignoreBOM keeps a leading BOM in the text, as Node's Buffer#toString does.
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

function joined(chunks: Uint8Array[], last: Uint8Array): Uint8Array {
  let length = last.length;
  for (const chunk of chunks) length += chunk.length;
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  bytes.set(last, at);
  return bytes;
}

/** Splits a byte stream (newline-delimited JSON-RPC over stdio) into lines without re-copying a long line on every chunk. */
export class LineSplitter {
  #chunks: Uint8Array[] = [];
  #pending = 0;
  #skipping = false;

  constructor(readonly options: LineSplitterOptions) {}

  push(chunk: Uint8Array): void {
    let start = 0;
    let newline = chunk.indexOf(10);
    while (newline !== -1) {
      const piece = chunk.subarray(start, newline);
      if (this.#skipping) {
        this.#skipping = false;
      } else {
        const line = utf8.decode(this.#chunks.length ? joined(this.#chunks, piece) : piece);
        this.#chunks = [];
        this.#pending = 0;
        this.options.onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
      }
      start = newline + 1;
      newline = chunk.indexOf(10, start);
    }
    if (start < chunk.length && !this.#skipping) {
      this.#chunks.push(chunk.subarray(start));
      this.#pending += chunk.length - start;
      if (this.#pending > this.options.maxLineBytes) {
        this.options.onOversize?.(this.#pending);
        this.#chunks = [];
        this.#pending = 0;
        this.#skipping = true;
      }
    }
  }

  clear(): void {
    this.#chunks = [];
    this.#pending = 0;
    this.#skipping = false;
  }
}
