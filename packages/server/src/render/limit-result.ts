import { estimateTokens, estimateTokensOfChars, type ToolResult } from "@codemux/core";
import { MAX_INLINE_BYTES, MAX_LINE_CHARS, MAX_RELAYOUT_BYTES, PREVIEW_CHARS, PREVIEW_LINES } from "../defaults";
import type { KeptResult, ResultOwner, ResultStore } from "../results";
import type { AnswerHints } from "./hints";
import { asToon, type ResultFormat } from "./toon";

/** What a result becomes on its way to a reader: the result itself with its size, or kept (too large) with a preview. */
export type LimitedResult =
  | { kept: undefined; result: ToolResult }
  | {
      kept: KeptResult;
      isError: boolean;
      estimatedTokens: number;
      preview: { description: string; text: string; estimatedTokens: number };
      /** The first keys of a JSON object result, and how many it has. */
      keys: TopLevelKeys;
    };

/** A JSON object's first keys (each cut to 100 characters) and how many it has; empty for anything else. */
export type TopLevelKeys = { topLevelKeys?: string[]; topLevelKeyCount?: number };

/** What keeping a large result needs: where to keep it and from what size. */
export interface ResultLimits {
  readonly results: Pick<ResultStore, "keep">;
  readonly largeResultBytes: number;
}

/**
 * A result over `largeResultBytes` is kept (for the session that asked) and replaced by a preview with
 * its size and estimated tokens; a smaller one gets its size in `_meta`. Data: each front end writes
 * the notice in its own words (`limitResult` for MCP, JSON for REST).
 */
export function keepIfLarge(limits: ResultLimits, options: LimitOptions): Promise<LimitedResult> {
  try {
    const limited = limitedNow(limits, options);
    return limited instanceof Promise ? limited : Promise.resolve(limited);
  } catch (error) {
    // A promise, as it was when this was an async function: a caller's catch sees every failure.
    return Promise.reject(error);
  }
}

/** `keepIfLarge` without a promise for a result small enough to go as it is (most): the caller then waits no turn for it. */
function limitedNow(limits: ResultLimits, options: LimitOptions): LimitedResult | Promise<LimitedResult> {
  const { tool, result, owner } = options;
  // Structured content is stringified at most once, for its size and for the kept text alike.
  const structured = structuredJson(result);
  if (approximateBytes(result, structured) <= spillBytes(options.threshold, limits.largeResultBytes))
    return { kept: undefined, result: withSize(result, structured) };
  const text = resultText(result, structured);
  if (!text) return { kept: undefined, result };
  return keep(limits, { tool, result, owner }, text);
}

async function keep(limits: ResultLimits, { tool, result, owner }: LimitOptions, text: string): Promise<LimitedResult> {
  const kept = await limits.results.keep(tool, text, owner);
  const preview = previewOf(text);
  return {
    kept,
    isError: result.isError === true,
    estimatedTokens: estimateTokens(text),
    preview: { ...preview, estimatedTokens: estimateTokens(preview.text) },
    // From the text as the tool gave it: the kept one may have text blocks, no longer JSON.
    keys: isPlainObject(result.structuredContent) && !texts(result).length ? keysOf(result.structuredContent) : topLevelKeys(texts(result).join("\n")),
  };
}

/** What to limit: a tool's result, whose it is, and the call's own threshold (`resultSizeThreshold`), if it gave one. */
export interface LimitOptions {
  tool: string;
  result: ToolResult;
  owner: ResultOwner;
  /** Bytes; 0 or absent is the global threshold, and more than MAX_INLINE_BYTES is that much. */
  threshold?: number | undefined;
}

/** The threshold a call spills at: its own, capped (a model cannot ask for an unbounded answer), else the global one. */
export function spillBytes(threshold: number | undefined, global: number): number {
  return threshold === undefined || threshold <= 0 ? global : Math.min(threshold, MAX_INLINE_BYTES);
}

/** For a JSON object's text (parsed only within the relayout bound), its first keys and how many there are. */
export function topLevelKeys(text: string): TopLevelKeys {
  if (text.length > MAX_RELAYOUT_BYTES || text.trimStart()[0] !== "{") return {};
  try {
    return keysOf(JSON.parse(text) as object);
  } catch {
    return {};
  }
}

function keysOf(value: object): TopLevelKeys {
  const keys = Object.keys(value);
  return { topLevelKeys: keys.slice(0, 50).map((k) => k.slice(0, 100)), topLevelKeyCount: keys.length };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function texts(result: ToolResult): string[] {
  return (result.content ?? []).flatMap((c) => (c.type === "text" ? [c.text] : []));
}

/** The notice a model reads in place of a kept result, naming the ways of the surface it came through. */
export function keptNotice(limited: Extract<LimitedResult, { kept: KeptResult }>, tool: string, hints: AnswerHints): ToolResult {
  const { kept, preview } = limited;
  return {
    content: [
      {
        type: "text",
        text: [
          `The result of ${tool} is ${formatBytes(kept.bytes)} (~${limited.estimatedTokens.toLocaleString("en-US")} tokens, ${kept.lines.toLocaleString("en-US")} lines), too large to show whole. It is kept as "${kept.handle}" for ${Math.round((kept.expiresAt - kept.createdAt) / 60_000)} minutes.`,
          `${hints.readKept(kept.handle)}${hints.inCode ? `, ${hints.inCode}` : ""}.`,
          ...(limited.keys.topLevelKeys
            ? [
                `Top-level keys: ${limited.keys.topLevelKeys.join(", ")}${(limited.keys.topLevelKeyCount ?? 0) > limited.keys.topLevelKeys.length ? ` (of ${limited.keys.topLevelKeyCount})` : ""}.`,
              ]
            : []),
          `--- preview: ${preview.description} (~${preview.estimatedTokens.toLocaleString("en-US")} tokens) ---`,
          preview.text,
        ].join("\n"),
      },
    ],
    ...(limited.isError ? { isError: true } : {}),
  };
}

/**
 * `keepIfLarge`, written for a model: the result with its size, or the notice of the kept one. One step of every MCP
 * answer that carries a tool's result; a promise only when the result is kept (a small one is answered in this turn).
 */
export function limitResult(services: LimitServices, options: LimitOptions): ToolResult | Promise<ToolResult> {
  const limited = limitedNow(services, options);
  return limited instanceof Promise ? limited.then((kept) => written(services, options, kept)) : written(services, options, limited);
}

type LimitServices = ResultLimits & { hints: AnswerHints; resultFormat?: ResultFormat };

function written(services: LimitServices, options: LimitOptions, limited: LimitedResult): ToolResult {
  if (limited.kept) return keptNotice(limited, options.tool, services.hints);
  if (services.resultFormat !== "toon") return limited.result;
  const toon = asToon(limited.result);
  return toon === limited.result ? toon : withSize(toon);
}

/** Keys of `_meta` on inline results: their size and estimated tokens, beside the content, which stays as the tool gave it. */
export const META_BYTES = "codemux/bytes";
export const META_ESTIMATED_TOKENS = "codemux/estimatedTokens";

/** A result's structured content as JSON, made once and only when asked for; undefined when it has none or it cannot be stringified. */
type StructuredJson = () => string | undefined;

function structuredJson(result: ToolResult): StructuredJson {
  let json: string | undefined;
  let made = false;
  return () => {
    if (!made) {
      made = true;
      json = result.structuredContent === undefined ? undefined : safeStringify(result.structuredContent);
    }
    return json;
  };
}

/**
 * An inline result with its size (UTF-8 bytes of its text parts and structured content, as if joined
 * by newlines) and estimated tokens in `_meta`; measured part by part, without joining them.
 */
export function withSize(result: ToolResult, structured: StructuredJson = structuredJson(result)): ToolResult {
  let chars = 0;
  let bytes = 0;
  let parts = 0;
  for (const part of result.content ?? []) {
    if (part.type !== "text") continue;
    chars += part.text.length;
    bytes += Buffer.byteLength(part.text, "utf8");
    parts++;
  }
  if (result.structuredContent !== undefined) {
    const json = structured() ?? "";
    chars += json.length;
    bytes += Buffer.byteLength(json, "utf8");
    parts++;
  }
  // The newlines that would join the parts.
  const joins = Math.max(0, parts - 1);
  const size = { [META_BYTES]: bytes + joins, [META_ESTIMATED_TOKENS]: estimateTokensOfChars(chars + joins) };
  return { ...result, _meta: result._meta === undefined ? size : { ...result._meta, ...size } };
}

/** The size of a result's JSON without building it: text and data lengths, plus structured content measured once. */
function approximateBytes(result: ToolResult, structured: StructuredJson): number {
  let bytes = 0;
  for (const part of result.content ?? []) {
    if (part.type === "text") bytes += part.text.length;
    else if ("data" in part && typeof part.data === "string") bytes += part.data.length;
    else if (part.type === "resource") bytes += "text" in part.resource ? part.resource.text.length : part.resource.blob.length;
    bytes += 40;
  }
  if (result.structuredContent !== undefined && bytes <= MAX_RELAYOUT_BYTES) bytes += structured()?.length ?? MAX_RELAYOUT_BYTES;
  return bytes;
}

/** The text parts of a result (and structuredContent when there is no text), in lines worth paging. */
function resultText(result: ToolResult, structured: StructuredJson): string {
  const parts = texts(result);
  if (parts.length) return pageable(parts.join("\n"));
  if (result.structuredContent === undefined) return "";
  return layoutJson(result.structuredContent) ?? structured() ?? "";
}

/** JSON on one long line is laid out a value a line, so that slice and grep find something to show; within bounds, else kept as it is. */
function pageable(text: string): string {
  if (text.length < MAX_LINE_CHARS || text.length > MAX_RELAYOUT_BYTES || text.indexOf("\n") !== -1) return text;
  const first = text.trimStart()[0];
  if (first !== "{" && first !== "[") return text;
  try {
    return layoutJson(JSON.parse(text), { textBlocks: true }) ?? text;
  } catch {
    return text;
  }
}

/** Indentation stops growing past this depth, so deep nesting cannot multiply the size. */
const MAX_INDENT = 16;

/**
 * A JSON value laid out one member a line, iteratively (a value nested thousands deep does not
 * overflow the stack) and linearly: indentation is capped, and the work stops (undefined) once the
 * output passes four times the relayout budget. With `textBlocks`, a string of several lines is written as its
 * text between `"""` lines, each line as it is (a snippet's multi-line value stays greppable line by line); no longer JSON.
 */
export function layoutJson(value: unknown, options: { textBlocks?: boolean } = {}): string | undefined {
  const out: string[] = [];
  let size = 0;
  type Frame =
    | { kind: "value"; value: unknown; depth: number; prefix: string; suffix: string }
    | { kind: "close"; text: string; depth: number; suffix: string };
  const stack: Frame[] = [{ kind: "value", value, depth: 0, prefix: "", suffix: "" }];
  const push = (depth: number, text: string): boolean => {
    const line = " ".repeat(Math.min(depth, MAX_INDENT)) + text;
    size += line.length + 1;
    out.push(line);
    return size <= 4 * MAX_RELAYOUT_BYTES;
  };
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    if (frame.kind === "close") {
      if (!push(frame.depth, frame.text + frame.suffix)) return undefined;
      continue;
    }
    const { value: v, depth, prefix, suffix } = frame;
    const isArray = Array.isArray(v);
    if (options.textBlocks && typeof v === "string" && v.includes("\n")) {
      if (!push(depth, `${prefix}"""`)) return undefined;
      for (const line of v.split("\n")) {
        size += line.length + 1;
        out.push(line);
      }
      if (!push(depth, `"""${suffix}`)) return undefined;
      continue;
    }
    if (typeof v !== "object" || v === null) {
      const scalar = JSON.stringify(v) ?? "null";
      if (!push(depth, prefix + scalar + suffix)) return undefined;
      continue;
    }
    const members: Array<[string, unknown]> = isArray
      ? (v as unknown[]).map((item) => ["", item])
      : Object.entries(v as object).map(([k, item]) => [`${JSON.stringify(k)}: `, item]);
    if (members.length === 0) {
      if (!push(depth, `${prefix}${isArray ? "[]" : "{}"}${suffix}`)) return undefined;
      continue;
    }
    if (!push(depth, prefix + (isArray ? "[" : "{"))) return undefined;
    stack.push({ kind: "close", text: isArray ? "]" : "}", depth, suffix });
    for (let i = members.length - 1; i >= 0; i--) {
      const [key, item] = members[i] as [string, unknown];
      stack.push({ kind: "value", value: item, depth: depth + 1, prefix: key, suffix: i < members.length - 1 ? "," : "" });
    }
  }
  return out.join("\n");
}

function safeStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

function previewOf(text: string): { text: string; description: string } {
  let end = 0;
  let lines = 0;
  while (lines < PREVIEW_LINES && end < text.length && end < PREVIEW_CHARS) {
    const next = text.indexOf("\n", end);
    end = next === -1 ? text.length : next + 1;
    lines++;
  }
  const shown = text.slice(0, Math.min(end, PREVIEW_CHARS)).replace(/\n$/, "");
  const whole = shown.length >= text.length - 1;
  const shownLines = shown.split("\n").length;
  return {
    text: shown,
    description: whole ? `all ${shown.length} characters` : end > PREVIEW_CHARS ? `first ${shown.length} characters` : `first ${shownLines} lines`,
  };
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  return `${Math.round(bytes / 1024)} KB`;
}
