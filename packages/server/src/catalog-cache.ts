import type { ToolDefinition } from "@codemux/core";
import type { PoolConfig, RememberedEra } from "@codemux/pool";
import { createHash } from "node:crypto";
import { MAX_CACHED_ERA_BYTES } from "./defaults";
import type { Store } from "./stores/store";

/** Bumped when the file's shape changes; an older file is ignored, never misread. */
export const CATALOG_CACHE_VERSION = 5;

interface CacheFile {
  version: typeof CATALOG_CACHE_VERSION;
  /** When the lists were written (ms since the epoch). */
  savedAt: number;
  servers: Record<string, ToolDefinition[]>;
  /** Each server's own instructions, as it last gave them. */
  instructions?: Record<string, string>;
  /** Each server's protocol era as last found, passed back at the next start so that it is not probed again. */
  eras?: Record<string, RememberedEra>;
}

/** What a cache holds: the tools per server, their instructions, and when they were saved (0 when there is no usable cache). */
export interface CachedCatalog {
  servers: Map<string, ToolDefinition[]>;
  instructions: Map<string, string>;
  eras: Map<string, RememberedEra>;
  savedAt: number;
}

/**
 * The last good tool lists (and each server's instructions) of one config, in a Store, so that a restart can answer searches at
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
    const none: CachedCatalog = { servers: new Map(), instructions: new Map(), eras: new Map(), savedAt: 0 };
    try {
      const text = await this.store.read(this.key);
      if (text === undefined) return none;
      const data = JSON.parse(text) as CacheFile;
      if (data.version !== CATALOG_CACHE_VERSION || typeof data.servers !== "object" || data.servers === null) return none;
      const savedAt = typeof data.savedAt === "number" && Number.isFinite(data.savedAt) ? data.savedAt : 0;
      const instructions = typeof data.instructions === "object" && data.instructions !== null ? Object.entries(data.instructions) : [];
      return {
        servers: new Map(Object.entries(data.servers).filter(([, tools]) => Array.isArray(tools))),
        instructions: new Map(instructions.filter((entry): entry is [string, string] => typeof entry[1] === "string")),
        eras: new Map(Object.entries(data.eras ?? {}).filter(([, era]) => isRememberedEra(era))),
        savedAt,
      };
    } catch {
      return none;
    }
  }

  /** Writes atomically (the store's rule), so a crash never leaves half a cache. */
  async save(servers: Map<string, ToolDefinition[]>, savedAt: number, more: Partial<Pick<CachedCatalog, "instructions" | "eras">> = {}): Promise<void> {
    const file: CacheFile = {
      version: CATALOG_CACHE_VERSION,
      savedAt,
      servers: Object.fromEntries(servers),
      instructions: Object.fromEntries(more.instructions ?? []),
      // A server's discover answer is its own words: bounded, so that no server can grow the file without limit.
      eras: Object.fromEntries([...(more.eras ?? [])].filter(([, era]) => JSON.stringify(era).length <= MAX_CACHED_ERA_BYTES)),
    };
    await this.store.write(this.key, JSON.stringify(file));
  }
}

/** A verdict as the pool takes it; anything else in the file (a hand edit, another version's shape) is dropped, so the server is probed. */
function isRememberedEra(value: unknown): value is RememberedEra {
  if (typeof value !== "object" || value === null) return false;
  const era = value as { kind?: unknown; at?: unknown; version?: unknown; discover?: { supportedVersions?: unknown } };
  if (typeof era.at !== "number" || !Number.isFinite(era.at)) return false;
  if (era.kind === "legacy") return era.version === undefined || typeof era.version === "string";
  return era.kind === "modern" && typeof era.discover === "object" && era.discover !== null && Array.isArray(era.discover.supportedVersions);
}
