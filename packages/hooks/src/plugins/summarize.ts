import { type ClientPeer, globMatcher, type ToolResult } from "@codemux/core";
import { randomBytes } from "node:crypto";
import { resultText } from "../canonical";
import type { BeforeCallResult, Plugin, PluginCall, ResultKeeper } from "../types";

export interface SummarizeOptions {
  /** Summarize text results longer than this many characters; default 8000. */
  minChars?: number;
  /** Characters of the result sent to the client's model; default 100 000. */
  maxInputChars?: number;
  /** Length of the summary; default 400 tokens. */
  maxTokens?: number;
  /** How long to wait for the client's model; default 60 000 ms. */
  samplingTimeoutMs?: number;
  /** Only these `server__tool` globs; all tools by default. */
  tools?: string[];
  /** Call origins whose results are summarized; default call_tool, passthrough, dispatch, rest (a snippet wants the full value). */
  origins?: string[];
  /** Full results kept by the plugin itself when the host has no result store: total characters; default 32 MiB. */
  keepMaxChars?: number;
  /** How long those stay; default 30 minutes. */
  keepTtlMs?: number;
}

export const SUMMARIZED_META = "codemux/summarized";
/** The argument that reads back a full result kept by the plugin itself. */
export const FULL_RESULT_ARGUMENT = "fullResult";
const BYPASS_ARGUMENTS = ["noSummary", "returnOriginal"];
const BYPASS = "summarize:bypass";
const SYSTEM_PROMPT =
  "Summarize tool output for another model that will act on it. Keep identifiers, names, numbers, paths, URLs and error messages exactly. Be brief; no preamble.";

interface Kept {
  text: string;
  owner: string;
  expiresAt: number;
}

/** Full results the plugin keeps itself when the host has no result store: bounded in characters, each for a while, for its session alone. */
class OwnResults {
  readonly #kept = new Map<string, Kept>();
  #chars = 0;

  constructor(
    readonly maxChars: number,
    readonly ttlMs: number,
    readonly clock: () => number,
  ) {}

  /** Keeps a result for `owner` (a session id); its handle. The oldest (and expired) go first to make room. */
  keep(text: string, owner: string): string {
    const now = this.clock();
    for (const [handle, entry] of this.#kept) {
      if (entry.expiresAt > now && this.#chars + text.length <= this.maxChars) break;
      this.#kept.delete(handle);
      this.#chars -= entry.text.length;
    }
    const handle = `sum_${randomBytes(6).toString("hex")}`;
    this.#kept.set(handle, { text, owner, expiresAt: now + this.ttlMs });
    this.#chars += text.length;
    return handle;
  }

  /** The text kept under `handle` for `owner`, while it lasts. */
  read(handle: string, owner: string): string | undefined {
    const entry = this.#kept.get(handle);
    return entry && entry.owner === owner && entry.expiresAt > this.clock() ? entry.text : undefined;
  }
}

/** True when the tool's own schema has this argument: then it is the tool's, not the plugin's. */
function declares(call: PluginCall, argument: string): boolean {
  const properties = (call.definition?.inputSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties !== undefined && Object.hasOwn(properties, argument);
}

/** Before a call: answers a read of a result the plugin kept, and takes the bypass arguments out of the call (marking it not to summarize). */
function readBackOrBypass(call: PluginCall, own: OwnResults): BeforeCallResult | undefined {
  const handle = call.arguments[FULL_RESULT_ARGUMENT];
  if (typeof handle === "string" && !declares(call, FULL_RESULT_ARGUMENT)) {
    const text = own.read(handle, call.session.id);
    if (text === undefined) {
      return {
        action: "abort",
        error: `No kept result "${handle.slice(0, 60)}" for this session: it expired or never existed. Call ${call.name} again without "${FULL_RESULT_ARGUMENT}".`,
      };
    }
    call.state.set(BYPASS, true);
    return { action: "respond", result: { content: [{ type: "text", text }] } };
  }
  const bypass = BYPASS_ARGUMENTS.filter((name) => call.arguments[name] === true && !declares(call, name));
  if (bypass.length === 0) return;
  call.state.set(BYPASS, true);
  const args = { ...call.arguments };
  for (const name of bypass) delete args[name];
  return { action: "continue", arguments: args };
}

/** The sampling request that asks the client's model for a summary of a tool's output, cut at `maxInputChars`. */
function summaryRequest(tool: string, text: string, options: { maxInputChars: number; maxTokens: number }): Record<string, unknown> {
  const { maxInputChars } = options;
  const more = text.length > maxInputChars ? `\n[... ${text.length - maxInputChars} more characters not shown]` : "";
  return {
    messages: [{ role: "user", content: { type: "text", text: `Summarize this output of the tool ${tool}:\n\n${text.slice(0, maxInputChars)}${more}` } }],
    systemPrompt: SYSTEM_PROMPT,
    maxTokens: options.maxTokens,
    temperature: 0.2,
    includeContext: "none",
    modelPreferences: {
      hints: [{ name: "haiku" }, { name: "flash" }, { name: "mini" }],
      costPriority: 0.9,
      speedPriority: 0.8,
      intelligencePriority: 0.2,
    },
  };
}

/** The client's model's summary, or nothing when it refused, timed out, failed or answered no text. */
async function askSummary(peer: ClientPeer, request: Record<string, unknown>, signal: AbortSignal): Promise<{ summary: string; model: string } | undefined> {
  try {
    const answer = await peer.createMessage(request, { signal });
    const part = Array.isArray(answer.content) ? undefined : answer.content;
    if (part?.type !== "text" || typeof part.text !== "string" || !part.text.trim()) return undefined;
    return { summary: part.text.trim(), model: answer.model };
  } catch {
    return undefined;
  }
}

/** The result the model sees: the summary, with where the full result is, and what was summarized in `_meta`. */
function summarizedResult(result: ToolResult, text: string, summary: { summary: string; model: string; handle: string; where: string }): ToolResult {
  const { model, handle, where } = summary;
  return {
    content: [
      {
        type: "text",
        text: `${summary.summary}\n\n[codemux] A summary (by your client's model ${model}) of a ${text.length.toLocaleString("en-US")}-character result. For the full result, ${where}.`,
      },
    ],
    _meta: { ...result._meta, [SUMMARIZED_META]: true, "codemux/originalChars": text.length, "codemux/handle": handle, "codemux/model": model },
  };
}

/**
 * `summarize` (off by default): a text result above `minChars` is summarized by the calling
 * client's own model through MCP sampling (no API key), when the client declared sampling. The full
 * result is kept: in codemux's result store (a read_result handle) when the host gives one, else in
 * the plugin's own bounded store, read back by calling the tool again with `{"fullResult": HANDLE}`.
 * Any failure returns the original result: it never fails a call.
 */
export function summarizePlugin(options: SummarizeOptions = {}): Plugin {
  const minChars = options.minChars ?? 8000;
  const request = { maxInputChars: options.maxInputChars ?? 100_000, maxTokens: options.maxTokens ?? 400 };
  const samplingTimeoutMs = options.samplingTimeoutMs ?? 60_000;
  const origins = new Set(options.origins ?? ["call_tool", "passthrough", "dispatch", "rest"]);
  const listed = options.tools?.length ? globMatcher(options.tools) : () => true;
  let results: ResultKeeper | undefined;
  let clock: () => number = Date.now;
  const own = new OwnResults(options.keepMaxChars ?? 32 * 1024 * 1024, options.keepTtlMs ?? 30 * 60_000, () => clock());

  return {
    name: "summarize",
    priority: 300,
    timeoutMs: samplingTimeoutMs + 5_000,
    init(ctx) {
      results = ctx.results;
      clock = ctx.clock;
    },
    beforeCall: (call) => readBackOrBypass(call, own),
    async afterCall(call, result) {
      if (result.isError || call.state.get(BYPASS) || !origins.has(call.origin) || !listed(call.name)) return;
      const peer = call.session.peer;
      if (!peer?.capabilities()?.sampling) return;
      const text = resultText(result);
      if (text.length < minChars) return;
      const signal = call.signal ? AbortSignal.any([call.signal, AbortSignal.timeout(samplingTimeoutMs)]) : AbortSignal.timeout(samplingTimeoutMs);
      // The client refused, timed out or failed: the original result is the answer.
      const asked = await askSummary(peer, summaryRequest(call.name, text, request), signal);
      if (!asked) return;
      let where: string;
      let handle: string;
      if (results) {
        handle = (await results.keep(call.name, text, call.session)).handle;
        where = `read it with read_result {"handle":"${handle}"}`;
      } else {
        handle = own.keep(text, call.session.id);
        where = `call ${call.name} again with {"${FULL_RESULT_ARGUMENT}":"${handle}"}`;
      }
      call.logField("summarized", true);
      return summarizedResult(result, text, { ...asked, handle, where });
    },
  };
}
