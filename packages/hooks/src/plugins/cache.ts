import { globMatcher, type Store, type ToolResult } from "@codemux/core";
import { createHash } from "node:crypto";
import { canonicalJson } from "../canonical";
import type { Plugin, PluginCall, PluginMetrics } from "../types";

export interface CacheOptions {
  /** How long a result stays; default 60 000 ms. */
  ttlMs?: number;
  /** Total size of kept results (characters of their JSON); least recently used go first; default 16 MiB. */
  maxBytes?: number;
  /** A larger result is not kept; default 1 MiB. */
  maxEntryBytes?: number;
  /** Cache tools whose server marks them `readOnlyHint: true`; default true. */
  readOnly?: boolean;
  /** Also cache these `server__tool` globs, whatever their hints. */
  tools?: string[];
  /** Never cache these, even read-only ones. */
  exclude?: string[];
  /**
   * One cache per principal; default true. `false` shares entries across principals: faster, but a
   * hit tells one principal what another asked and returns what another was answered.
   */
  perPrincipal?: boolean;
}

/** Arguments longer than this (canonical JSON) are not worth a key. */
const MAX_KEY_CHARS = 64 * 1024;
const KEY = "cache:key";
export const CACHE_META = "codemux/cache";

interface Entry {
  json: string;
  expiresAt: number;
}

/** This instance's own entries, bounded in bytes: the least recently used go first. */
class MemoryEntries {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** The entry of `key`, moved to the end (the most recently used). */
  use(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry;
  }

  drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.json.length;
  }

  /** Keeps an entry, then drops the least recently used until the total fits. */
  set(key: string, entry: Entry): void {
    this.drop(key);
    this.#entries.set(key, entry);
    this.#bytes += entry.json.length;
    for (const oldest of this.#entries.keys()) {
      if (this.#bytes <= this.maxBytes) break;
      this.drop(oldest);
    }
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  /** Drops the entries whose key starts with `prefix`; how many went. */
  dropPrefixed(prefix: string): number {
    let gone = 0;
    for (const key of [...this.#entries.keys()]) {
      if (!key.startsWith(prefix)) continue;
      this.drop(key);
      gone++;
    }
    return gone;
  }
}

/** The key of a call: its principal (unless entries are shared across principals), its tool and its arguments' canonical JSON; none when they are too long. */
function cacheKey(call: PluginCall, perPrincipal: boolean): string | undefined {
  const args = canonicalJson(call.arguments, MAX_KEY_CHARS);
  if (args === undefined) return undefined;
  // The principal as a JSON string: no name, however odd, can end where another begins.
  return `${perPrincipal ? JSON.stringify(call.principal) : ""}\u0000${call.name}\u0000${args}`;
}

/**
 * `cache`: answers repeated calls of read-only (or listed) tools from memory for a TTL, keyed by
 * the principal, the tool and its arguments' canonical JSON (sorted keys), bounded in bytes with LRU eviction.
 * Error results and thrown errors are never kept.
 */
export function cachePlugin(options: CacheOptions = {}): Plugin & { readonly size: number; readonly bytes: number; clear(): void } {
  const ttlMs = options.ttlMs ?? 60_000;
  const maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  const maxEntryBytes = Math.min(options.maxEntryBytes ?? 1024 * 1024, maxBytes);
  const listed = globMatcher(options.tools);
  const excluded = globMatcher(options.exclude);
  const perPrincipal = options.perPrincipal !== false;
  const entries = new MemoryEntries(maxBytes);
  let clock: () => number = Date.now;
  let metrics: PluginMetrics | undefined;
  let shared: Store | undefined;
  // In a shared store an entry is its principal's alone, as in memory, unless entries are shared across principals.
  const owner = (principal: string): { owner?: string } => (perPrincipal ? { owner: principal } : {});

  return {
    name: "cache",
    priority: 100,
    get size() {
      return entries.size;
    },
    get bytes() {
      return entries.bytes;
    },
    clear() {
      entries.clear();
    },
    forget(principal) {
      // This instance's own entries; a shared store's are deleted by whoever forgets there (they carry their owner).
      return entries.dropPrefixed(`${JSON.stringify(principal)}\u0000`);
    },
    init(ctx) {
      clock = ctx.clock;
      metrics = ctx.metrics;
      shared = ctx.sharedStore;
    },
    async beforeCall(call) {
      if (excluded(call.name)) return;
      if (!listed(call.name) && !(options.readOnly !== false && call.annotations.readOnlyHint === true)) return;
      const key = cacheKey(call, perPrincipal);
      if (key === undefined) return;
      // Least recently used goes first: a hit moves to the end (of this instance's own entries; a shared store keeps none here).
      const entry = shared ? await sharedEntry(shared, key, owner(call.principal)) : entries.use(key);
      if (entry && entry.expiresAt > clock()) {
        call.logField("cache", "hit");
        metrics?.increment("codemux_cache_hits_total", { server: call.server });
        const result = JSON.parse(entry.json) as ToolResult;
        return { action: "respond", result: { ...result, _meta: { ...result._meta, [CACHE_META]: "hit" } } };
      }
      if (entry && !shared) entries.drop(key);
      call.state.set(KEY, key);
      metrics?.increment("codemux_cache_misses_total", { server: call.server });
    },
    async afterCall(call, result) {
      const key = call.state.get(KEY);
      if (typeof key !== "string" || result.isError) return;
      const json = JSON.stringify(result);
      if (json.length > maxEntryBytes) return;
      // Shared by every instance (Redis bounds it by the TTL); a cache that cannot be written is only a miss next time.
      if (shared) return void (await shared.write(sharedKey(key), json, { ttlMs, ...owner(call.principal) }).catch(() => undefined));
      entries.set(key, { json, expiresAt: clock() + ttlMs });
    },
  };
}

/** A Store key for a cache key (which holds arguments of any length and characters). */
function sharedKey(key: string): string {
  return `cache-${createHash("sha256").update(key).digest("hex")}`;
}

/**
 * The shared entry of `key` as `who` may read it, in one read: the store expires it with the TTL it was
 * written with, so what it returns is fresh. A store that does not answer (Redis down) is a miss, never a failed call.
 */
async function sharedEntry(store: Store, key: string, who: { owner?: string }): Promise<Entry | undefined> {
  const json = await store.read(sharedKey(key), who).catch(() => undefined);
  return json === undefined ? undefined : { json, expiresAt: Number.POSITIVE_INFINITY };
}
