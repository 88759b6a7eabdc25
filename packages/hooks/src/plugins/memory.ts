import { callLine, defineMetaTool, globMatcher, type MetaTool, type ToolResult } from "@codemux/core";
import { join } from "node:path";
import type { Plugin, PluginCall, PluginInitContext } from "../types";
import { MemoryFiles } from "./memory-files";

export interface MemoryPluginOptions {
  /** Tools whose answers are remembered (`server__tool` globs); every tool by default. */
  tools?: string[];
  /** Memories kept per principal, newest first; the oldest go (default 200). */
  maxEntries?: number;
  /** Characters of one answer kept (default 2,000); the rest is cut with a note. */
  maxEntryChars?: number;
  /** Keep memories this long (ms); the config's `retention` for audit lines applies when this is not set. */
  ttlMs?: number;
  /** Folder of the memory files (one per principal); `<dataDir>/memory` by default. */
  dir?: string;
}

/** One remembered answer: when, which tool with which arguments (one line), and what it said (bounded). */
export interface Memory {
  at: string;
  tool: string;
  call: string;
  text: string;
}

/** The memory plugin, and what reads it on purpose: `recall`, and the `memory` meta-tool a host lists beside its own. */
export interface MemoryPlugin extends Plugin {
  /** The principal's memories whose tool, call or text contain every word of `query` (all without one), newest first. */
  recall(principal: string, options?: { query?: string; limit?: number }): Promise<Memory[]>;
  readonly metaTools: readonly MetaTool[];
}

const MAX_QUERY_CHARS = 500;
const MAX_RECALL = 50;

/**
 * Seed 003's memory: remembers what tools answered, per principal, across calls and restarts. What it
 * keeps is read only on purpose (`recall`, the `memory` meta-tool), never put back into results or
 * instructions: a tool's text must not become a standing instruction to the model. One principal never
 * reads or forgets another's: each principal's memories are a file of their own, named by a hash.
 */
export function memoryPlugin(options: MemoryPluginOptions = {}): MemoryPlugin {
  const maxEntries = Math.max(1, options.maxEntries ?? 200);
  const maxChars = Math.max(100, options.maxEntryChars ?? 2_000);
  const remembered = options.tools?.length ? globMatcher(options.tools) : () => true;
  let ctx: PluginInitContext | undefined;
  let dir = options.dir ?? "";
  const files = new MemoryFiles<Memory>({ dir: () => dir, maxEntries, warn: (message) => ctx?.logger.warn(message) });
  const ttlOf = (principal: string) => options.ttlMs ?? ctx?.retentionMs?.("audit", principal);

  const load = async (principal: string): Promise<Memory[]> => {
    const now = ctx?.clock() ?? Date.now();
    // Shared (Redis): read afresh each time, since any instance may have added some.
    if (ctx?.sharedLists) return fresh((await ctx.sharedLists.read(principal, maxEntries)).flatMap(memoryOf), ttlOf(principal), now);
    return fresh(await files.load(principal), ttlOf(principal), now);
  };

  const recall: MemoryPlugin["recall"] = async (principal, { query, limit } = {}) => {
    const words = (query ?? "").slice(0, MAX_QUERY_CHARS).toLowerCase().split(/\s+/).filter(Boolean);
    const memories = await load(principal);
    const found = memories.filter((m) => {
      const haystack = `${m.tool}\n${m.call}\n${m.text}`.toLowerCase();
      return words.every((word) => haystack.includes(word));
    });
    return found.slice(0, Math.min(MAX_RECALL, Math.max(1, limit ?? 10)));
  };

  const forget = async (principal: string): Promise<number> => {
    if (ctx?.sharedLists) return await ctx.sharedLists.clear(principal);
    const count = await files.update(principal, (memories) => ({ next: [], value: memories.length }), load);
    await files.remove(principal);
    return count;
  };

  return {
    name: "memory",
    // Runs last on the way out, so it keeps what the client is answered (after redact and summarize).
    priority: 1_000,
    metaTools: [memoryMetaTool(recall, forget)],
    init(init) {
      ctx = init;
      dir ||= join(init.dataDir, "memory");
    },
    async afterCall(call: PluginCall, result: ToolResult) {
      if (result.isError || !remembered(call.name)) return;
      const memory = memoryOfAnswer(call, result, { maxChars, now: ctx?.clock() ?? Date.now() });
      const lists = ctx?.sharedLists;
      // One atomic push in a shared list: two instances remembering at once each keep theirs. A failure costs the memory, never the call.
      if (lists)
        await lists
          .push(call.principal, JSON.stringify(memory), { max: maxEntries, ttlMs: ttlOf(call.principal) })
          .catch((error: Error) => ctx?.logger.warn(`memory: could not keep a memory (${error.message})`));
      else await files.update(call.principal, (memories) => ({ next: [memory, ...memories].slice(0, maxEntries), value: undefined }), load);
    },
    forget,
    recall,
    async close() {
      await files.close();
    },
  };
}

/** The `memory` meta-tool: recall and forget, on the caller's own memories only. */
function memoryMetaTool(recall: MemoryPlugin["recall"], forget: (principal: string) => Promise<number>): MetaTool {
  return defineMetaTool<{ action?: string; query?: string; limit?: number }>({
    name: "memory",
    description:
      "Recall what tools answered before (yours only): action recall {query?, limit?} finds remembered answers, newest first; forget deletes them all.",
    inputSchema: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["recall", "forget"] },
        query: { type: "string", maxLength: MAX_QUERY_CHARS },
        limit: { type: "integer", minimum: 1, maximum: MAX_RECALL },
      },
      required: ["action"],
    },
    run: async ({ action, query, limit }, request): Promise<ToolResult> => {
      const { principal } = request.session;
      if (action === "forget") {
        const gone = await forget(principal);
        return { content: [{ type: "text", text: `Forgot ${gone} memories.` }] };
      }
      const memories = await recall(principal, { ...(query ? { query } : {}), ...(limit ? { limit } : {}) });
      // Data answered to a question asked on purpose: the model reads it as a tool result, not as instructions.
      return { content: [{ type: "text", text: JSON.stringify({ memories }) }], structuredContent: { memories } };
    },
  });
}

/** What is remembered of one answer: when, the call in one line, and its text, cut at `maxChars` with a note. */
function memoryOfAnswer(call: PluginCall, result: ToolResult, options: { maxChars: number; now: number }): Memory {
  const { maxChars } = options;
  const text = result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");
  const kept = text.length > maxChars ? `${text.slice(0, maxChars)}… (${text.length - maxChars} more characters not kept)` : text;
  return { at: new Date(options.now).toISOString(), tool: call.name, call: callLine(call.name, call.arguments).slice(0, 200), text: kept };
}

/** The memory a shared list item holds (bounded), or none when it is not one. */
function memoryOf(text: string): Memory[] {
  try {
    const { at, tool, call, text: said } = JSON.parse(text) as Partial<Memory>;
    if (typeof at !== "string" || typeof tool !== "string" || typeof call !== "string" || typeof said !== "string") return [];
    return [{ at, tool: tool.slice(0, 200), call: call.slice(0, 200), text: said }];
  } catch {
    return [];
  }
}

/** The memories younger than `ttlMs` (all without one). */
function fresh(memories: Memory[], ttlMs: number | undefined, now: number): Memory[] {
  if (ttlMs === undefined) return memories;
  return memories.filter((m) => now - Date.parse(m.at) <= ttlMs);
}
