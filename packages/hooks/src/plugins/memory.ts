import { callLine, defineMetaTool, globMatcher, type MetaTool, type ToolResult } from "@codemux/core";
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Plugin, PluginCall, PluginInitContext } from "../types";

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
  const loaded = new Map<string, Promise<Memory[]>>();
  /** One write at a time per principal, in order: the file always holds a whole, recent list. */
  const writing = new Map<string, Promise<void>>();
  const fileOf = (principal: string) => join(dir, `${createHash("sha256").update(principal).digest("hex").slice(0, 32)}.json`);
  const ttlOf = (principal: string) => options.ttlMs ?? ctx?.retentionMs?.("audit", principal);

  const load = async (principal: string): Promise<Memory[]> => {
    const now = ctx?.clock() ?? Date.now();
    // Shared (Redis): read afresh each time, since any instance may have added some.
    if (ctx?.sharedLists) return fresh((await ctx.sharedLists.read(principal, maxEntries)).flatMap(memoryOf), ttlOf(principal), now);
    let list = loaded.get(principal);
    if (!list) {
      list = readFile(fileOf(principal), "utf8").then(
        (text) => {
          const parsed = JSON.parse(text) as unknown;
          return Array.isArray(parsed) ? (parsed as Memory[]).slice(0, maxEntries) : [];
        },
        () => [],
      );
      loaded.set(principal, list);
    }
    return fresh(await list, ttlOf(principal), now);
  };
  const save = (principal: string, memories: Memory[]): Promise<void> => {
    loaded.set(principal, Promise.resolve(memories));
    const file = fileOf(principal);
    const next = (writing.get(principal) ?? Promise.resolve()).then(async () => {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      // Written whole and renamed over: a crash leaves the last list, never half of one.
      await writeFile(`${file}.tmp`, JSON.stringify(memories), { mode: 0o600 });
      await rename(`${file}.tmp`, file);
    });
    const settled = next.catch((error: Error) => ctx?.logger.warn(`memory: could not keep a memory (${error.message})`));
    writing.set(principal, settled);
    return settled;
  };
  /** One change of a principal's list at a time: two calls ending together each add their memory, neither over the other's. */
  const updating = new Map<string, Promise<unknown>>();
  const update = <T>(principal: string, change: (memories: Memory[]) => { next: Memory[]; value: T }): Promise<T> => {
    const done = (updating.get(principal) ?? Promise.resolve()).then(async () => {
      const { next, value } = change(await load(principal));
      await save(principal, next);
      return value;
    });
    updating.set(
      principal,
      done.catch(() => undefined),
    );
    return done;
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

  const memoryTool = defineMetaTool<{ action?: string; query?: string; limit?: number }>({
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

  const forget = async (principal: string): Promise<number> => {
    if (ctx?.sharedLists) return await ctx.sharedLists.clear(principal);
    const count = await update(principal, (memories) => ({ next: [], value: memories.length }));
    await rm(fileOf(principal), { force: true });
    return count;
  };

  return {
    name: "memory",
    // Runs last on the way out, so it keeps what the client is answered (after redact and summarize).
    priority: 1_000,
    metaTools: [memoryTool],
    init(init) {
      ctx = init;
      dir ||= join(init.dataDir, "memory");
    },
    async afterCall(call: PluginCall, result: ToolResult) {
      if (result.isError || !remembered(call.name)) return;
      const text = result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");
      const kept = text.length > maxChars ? `${text.slice(0, maxChars)}… (${text.length - maxChars} more characters not kept)` : text;
      const memory: Memory = {
        at: new Date(ctx?.clock() ?? Date.now()).toISOString(),
        tool: call.name,
        call: callLine(call.name, call.arguments).slice(0, 200),
        text: kept,
      };
      const lists = ctx?.sharedLists;
      // One atomic push in a shared list: two instances remembering at once each keep theirs. A failure costs the memory, never the call.
      if (lists)
        await lists
          .push(call.principal, JSON.stringify(memory), { max: maxEntries, ttlMs: ttlOf(call.principal) })
          .catch((error: Error) => ctx?.logger.warn(`memory: could not keep a memory (${error.message})`));
      else await update(call.principal, (memories) => ({ next: [memory, ...memories].slice(0, maxEntries), value: undefined }));
    },
    forget,
    recall,
    async close() {
      await Promise.all(writing.values());
    },
  };
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
