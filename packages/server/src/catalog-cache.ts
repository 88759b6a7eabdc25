import type { ToolDefinition } from "@codemux/core";
import type { PoolConfig } from "@codemux/pool";
import { createHash } from "node:crypto";
import type { Store } from "./stores/store";

/** Bumped when the file's shape changes; an older file is ignored, never misread. */
export const CATALOG_CACHE_VERSION = 3;

interface CacheFile {
  version: typeof CATALOG_CACHE_VERSION;
  /** When the lists were written (ms since the epoch). */
  savedAt: number;
  servers: Record<string, ToolDefinition[]>;
}

/** What a cache holds: the tools per server, and when they were saved (0 when there is no usable cache). */
export interface CachedCatalog {
  servers: Map<string, ToolDefinition[]>;
  savedAt: number;
}

/**
 * The last good tool lists of one config, in a Store, so that a restart can answer searches at
 * once while the servers connect behind. Keyed by a hash of the resolved server specs: another
 * config (or a changed one) never sees these tools. Holds tool definitions only, no secrets.
 */
export class CatalogCache {
  readonly key: string;

  constructor(
    readonly store: Store,
    config: PoolConfig,
  ) {
    const hash = createHash("sha256")
      .update(JSON.stringify(config.servers.map((s) => [s.name, s.transport, s.tools])))
      .digest("hex")
      .slice(0, 16);
    this.key = `catalog-${hash}.json`;
  }

  /** The cached tools per server and when they were saved; empty when there is no usable cache. */
  async load(): Promise<CachedCatalog> {
    const none: CachedCatalog = { servers: new Map(), savedAt: 0 };
    try {
      const text = await this.store.read(this.key);
      if (text === undefined) return none;
      const data = JSON.parse(text) as CacheFile;
      if (data.version !== CATALOG_CACHE_VERSION || typeof data.servers !== "object" || data.servers === null) return none;
      const savedAt = typeof data.savedAt === "number" && Number.isFinite(data.savedAt) ? data.savedAt : 0;
      return { servers: new Map(Object.entries(data.servers).filter(([, tools]) => Array.isArray(tools))), savedAt };
    } catch {
      return none;
    }
  }

  /** Writes atomically (the store's rule), so a crash never leaves half a cache. */
  async save(servers: Map<string, ToolDefinition[]>, savedAt: number): Promise<void> {
    await this.store.write(this.key, JSON.stringify({ version: CATALOG_CACHE_VERSION, savedAt, servers: Object.fromEntries(servers) } satisfies CacheFile));
  }
}
