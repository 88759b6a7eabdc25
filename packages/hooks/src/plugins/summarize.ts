import { globMatcher, type ToolResult } from "@codemux/core";
import { randomBytes } from "node:crypto";
import { resultText } from "../canonical";
import type { Plugin, PluginCall, ResultKeeper } from "../types";

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

/**
 * `summarize` (off by default): a text result above `minChars` is summarized by the calling
 * client's own model through MCP sampling (no API key), when the client declared sampling. The full
 * result is kept: in codemux's result store (a read_result handle) when the host gives one, else in
 * the plugin's own bounded store, read back by calling the tool again with `{"fullResult": HANDLE}`.
 * Any failure returns the original result: it never fails a call.
 */
export function summarizePlugin(options: SummarizeOptions = {}): Plugin {
  const minChars = options.minChars ?? 8000;
  const maxInputChars = options.maxInputChars ?? 100_000;
  const samplingTimeoutMs = options.samplingTimeoutMs ?? 60_000;
  const origins = new Set(options.origins ?? ["call_tool", "passthrough", "dispatch", "rest"]);
  const listed = options.tools?.length ? globMatcher(options.tools) : () => true;
  const keepMaxChars = options.keepMaxChars ?? 32 * 1024 * 1024;
  const keepTtlMs = options.keepTtlMs ?? 30 * 60_000;
  const kept = new Map<string, Kept>();
  let keptChars = 0;
  let results: ResultKeeper | undefined;
  let clock: () => number = Date.now;

  const keepOwn = (text: string, owner: string): string => {
    const now = clock();
    for (const [handle, entry] of kept) {
      if (entry.expiresAt > now && keptChars + text.length <= keepMaxChars) break;
      kept.delete(handle);
      keptChars -= entry.text.length;
    }
    const handle = `sum_${randomBytes(6).toString("hex")}`;
    kept.set(handle, { text, owner, expiresAt: now + keepTtlMs });
    keptChars += text.length;
    return handle;
  };

  const declares = (call: PluginCall, argument: string) => {
    const properties = (call.definition?.inputSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
    return properties !== undefined && Object.hasOwn(properties, argument);
  };

  return {
    name: "summarize",
    priority: 300,
    timeoutMs: samplingTimeoutMs + 5_000,
    init(ctx) {
      results = ctx.results;
      clock = ctx.clock;
    },
    beforeCall(call) {
      const handle = call.arguments[FULL_RESULT_ARGUMENT];
      if (typeof handle === "string" && !declares(call, FULL_RESULT_ARGUMENT)) {
        const entry = kept.get(handle);
        if (!entry || entry.owner !== call.session.id || entry.expiresAt <= clock()) {
          return {
            action: "abort",
            error: `No kept result "${handle.slice(0, 60)}" for this session: it expired or never existed. Call ${call.name} again without "${FULL_RESULT_ARGUMENT}".`,
          };
        }
        call.state.set(BYPASS, true);
        return { action: "respond", result: { content: [{ type: "text", text: entry.text }] } };
      }
      const bypass = BYPASS_ARGUMENTS.filter((name) => call.arguments[name] === true && !declares(call, name));
      if (bypass.length === 0) return;
      call.state.set(BYPASS, true);
      const args = { ...call.arguments };
      for (const name of bypass) delete args[name];
      return { action: "continue", arguments: args };
    },
    async afterCall(call, result) {
      if (result.isError || call.state.get(BYPASS) || !origins.has(call.origin) || !listed(call.name)) return;
      const peer = call.session.peer;
      if (!peer?.capabilities()?.sampling) return;
      const text = resultText(result);
      if (text.length < minChars) return;
      let summary: string;
      let model: string;
      try {
        const signal = call.signal ? AbortSignal.any([call.signal, AbortSignal.timeout(samplingTimeoutMs)]) : AbortSignal.timeout(samplingTimeoutMs);
        const answer = await peer.createMessage(
          {
            messages: [
              {
                role: "user",
                content: {
                  type: "text",
                  text: `Summarize this output of the tool ${call.name}:\n\n${text.slice(0, maxInputChars)}${text.length > maxInputChars ? `\n[... ${text.length - maxInputChars} more characters not shown]` : ""}`,
                },
              },
            ],
            systemPrompt: SYSTEM_PROMPT,
            maxTokens: options.maxTokens ?? 400,
            temperature: 0.2,
            includeContext: "none",
            modelPreferences: {
              hints: [{ name: "haiku" }, { name: "flash" }, { name: "mini" }],
              costPriority: 0.9,
              speedPriority: 0.8,
              intelligencePriority: 0.2,
            },
          },
          { signal },
        );
        const part = Array.isArray(answer.content) ? undefined : answer.content;
        if (part?.type !== "text" || typeof part.text !== "string" || !part.text.trim()) return;
        summary = part.text.trim();
        model = answer.model;
      } catch {
        // The client refused, timed out or failed: the original result is the answer.
        return;
      }
      let where: string;
      let handle: string;
      if (results) {
        handle = (await results.keep(call.name, text, call.session)).handle;
        where = `read it with read_result {"handle":"${handle}"}`;
      } else {
        handle = keepOwn(text, call.session.id);
        where = `call ${call.name} again with {"${FULL_RESULT_ARGUMENT}":"${handle}"}`;
      }
      call.logField("summarized", true);
      const summarized: ToolResult = {
        content: [
          {
            type: "text",
            text: `${summary}\n\n[codemux] A summary (by your client's model ${model}) of a ${text.length.toLocaleString("en-US")}-character result. For the full result, ${where}.`,
          },
        ],
        _meta: { ...result._meta, [SUMMARIZED_META]: true, "codemux/originalChars": text.length, "codemux/handle": handle, "codemux/model": model },
      };
      return summarized;
    },
  };
}
