import type { Logger, ToolDefinition } from "@codemux/core";
import type { Catalog } from "@codemux/catalog";
import { type ModuleTree, codegenToolOf } from "@codemux/codegen";
import type { RememberedEra, ServerStatus } from "@codemux/pool";
import { EventEmitter } from "node:events";
import type { CatalogCache } from "./catalog-cache";
import { CACHE_SAVE_DELAY_MS } from "./defaults";
import type { ItemGate, ScreenGate, ScanMode, ToolScreen } from "./screen";
import type { ToolPool } from "./tool-pool";

export interface ReadinessOptions {
  pool: ToolPool;
  catalog: Catalog;
  modules: ModuleTree;
  cache: CatalogCache | undefined;
  /** Skip reading the cached catalog (it is still written). */
  refreshCache: boolean;
  /** A cache older than this is still used at start, but each lazy server in it is connected once in the background to list its tools afresh. */
  cacheTtlMs: number | undefined;
  logger: Logger;
  clock: () => number;
  startupWaitMs: number;
  discoveryWaitMs: number;
  /** What the model is shown of each server's tools and instructions (scanned, hidden characters removed, quarantined ones held back). */
  screen: ToolScreen;
}

interface ReadinessEvents {
  /** The set of tools changed (a server connected, dropped or changed its list). */
  toolsChanged: [];
}

/**
 * Which servers are there, and waiting for them: keeps the catalog and the module tree in step with the
 * pool (and with the last good catalog on disk, so a restart answers at once), and waits, bounded, for
 * the servers a request needs while they connect.
 */
export class Readiness extends EventEmitter<ReadinessEvents> {
  readonly #options: ReadinessOptions;
  /** Servers whose tools so far come from the disk cache, not from the server. */
  readonly #cached = new Set<string>();
  /** Each server's instructions as the cache had them, until the server itself says. */
  readonly #cachedInstructions = new Map<string, string>();
  /** Each server's era as the cache had it: the pool connects with it instead of probing. */
  readonly #cachedEras = new Map<string, RememberedEra>();
  #cacheLoaded: Promise<void> | undefined;
  /** The cache read at start was older than `cacheTtlMs`. */
  #stale = false;
  #startedAt: number | undefined;
  #saveTimer: NodeJS.Timeout | undefined;

  constructor(options: ReadinessOptions) {
    super();
    this.setMaxListeners(0);
    this.#options = options;
    const { pool, catalog, modules } = options;
    pool.on("tools", (server, tools) => {
      this.#cached.delete(server);
      this.#setServerTools(server, options.screen.tools(server, tools));
      // Its instructions are judged at discovery too (the verdict shows in `codemux list` and waits for approval), not at a session's start only.
      this.instructions(server);
      this.#scheduleSave();
    });
    pool.on("removed", (server) => {
      this.#cached.delete(server);
      options.screen.forget(server);
      catalog.removeServer(server);
      modules.removeServer(server);
      this.emit("toolsChanged");
    });
  }

  /** Loads the cached catalog once (before start too: a 2026 client's first server/discover comes before anything starts); resolves when it is in. */
  loaded(): Promise<void> {
    this.#cacheLoaded ??= this.#loadCache();
    return this.#cacheLoaded;
  }

  /** True for a server whose tools come from the cache while it has not connected yet: the pool starts it on its first call. */
  isCached(server: string): boolean {
    return this.#cached.has(server);
  }

  /** Loads the cached catalog, then connects every server in the background; resolves when the pool's start has begun. */
  start(): Promise<void> {
    if (this.#startedAt !== undefined) return this.loaded();
    this.#startedAt = this.#options.clock();
    return this.loaded()
      .then(() => this.#options.pool.start())
      .then(() => this.#refreshStale());
  }

  /** Waits (bounded) until every server has connected or failed; servers known from the cache do not hold it up. True when all settled in time. */
  async ready(timeoutMs = this.#options.startupWaitMs): Promise<boolean> {
    await this.#cacheLoaded;
    const { pool } = this.#options;
    const waiting = pool.status().filter((s) => s.state === "connecting" && !this.#cached.has(s.name));
    if (waiting.length === 0) return true;
    return this.#waitUntil(() => pool.status().every((s) => s.state !== "connecting" || this.#cached.has(s.name)), timeoutMs);
  }

  /** Waits (bounded) until every server has connected or failed, cached or not: for one-shot commands that want live servers. */
  async settled(timeoutMs = this.#options.startupWaitMs): Promise<boolean> {
    await this.#cacheLoaded;
    return this.#waitUntil(() => this.#options.pool.status().every((s) => s.state !== "connecting"), timeoutMs);
  }

  /**
   * For answers over the whole catalog (search, module lists): waits for servers with nothing cached
   * only during the first seconds after start, so a hung server never holds a search up for long.
   */
  async discovered(): Promise<void> {
    await this.#cacheLoaded;
    const { clock, discoveryWaitMs } = this.#options;
    const left = (this.#startedAt ?? clock()) + discoveryWaitMs - clock();
    if (left > 0) await this.ready(left);
  }

  /** Waits (bounded) while one server is connecting for the first time with nothing cached; at once otherwise. */
  async waitForServer(server: string): Promise<void> {
    await this.#cacheLoaded;
    const connecting = () => this.#options.pool.status().some((s) => s.name === server && s.state === "connecting") && !this.#cached.has(server);
    if (connecting()) await this.#waitUntil(() => !connecting(), this.#options.startupWaitMs);
  }

  status(): ServerStatus[] {
    return this.#options.pool.status();
  }

  /**
   * What a server said about its tools (`instructions` at initialize or server/discover), as the model is shown it (see
   * `ToolScreen`): live once it has connected, else from the cache.
   */
  instructions(server: string): string | undefined {
    const live = this.#options.pool.status().find((s) => s.name === server);
    return this.#options.screen.instructions(server, live?.serverInfo ? live.instructions : this.#cachedInstructions.get(server));
  }

  /**
   * Screens every server's tools again as last listed: after an approval (a tool held back is shown again), or a
   * reload that changed `security.scan` or turned the pin plugin on or off.
   */
  rescreen(update?: { mode: ScanMode; gate?: ScreenGate | undefined; itemGate?: ItemGate | undefined }): void {
    const { screen } = this.#options;
    if (update) screen.update(update);
    for (const [server, tools] of screen.listed()) if (!this.#cached.has(server)) this.#setServerTools(server, screen.tools(server, tools));
  }

  /** A server's protocol era: live once it has connected, else from the cache (what the pool passes back instead of probing). */
  era(server: string): RememberedEra | undefined {
    return this.#options.pool.status().find((s) => s.name === server)?.era ?? this.#cachedEras.get(server);
  }

  /** Servers still connecting (of those `shown`, when given), for a note under answers given before they are all there. */
  pendingNote(shown?: (server: string) => boolean): string[] {
    const connecting = this.status()
      .filter((s) => s.state === "connecting" && (shown === undefined || shown(s.name)))
      .map((s) => s.name);
    const missing = connecting.filter((s) => !this.#cached.has(s));
    const cached = connecting.filter((s) => this.#cached.has(s));
    return [
      ...(missing.length ? [`(still connecting: ${missing.join(", ")}; their tools are not listed yet)`] : []),
      ...(cached.length ? [`(still connecting: ${cached.join(", ")}; their tools are listed from the last run)`] : []),
    ];
  }

  /** Writes the catalog cache now if a save is pending (at close). */
  async flush(): Promise<void> {
    if (!this.#saveTimer) return;
    clearTimeout(this.#saveTimer);
    await this.#save();
  }

  async #loadCache(): Promise<void> {
    const { cache, refreshCache, pool, catalog } = this.#options;
    if (!cache || refreshCache) return;
    const names = new Set(pool.names);
    const { servers, instructions, eras, savedAt } = await cache.load();
    for (const [server, text] of instructions) if (names.has(server)) this.#cachedInstructions.set(server, text);
    for (const [server, era] of eras) if (names.has(server)) this.#cachedEras.set(server, era);
    for (const [server, tools] of servers) {
      if (!names.has(server) || catalog.entries(server).length > 0) continue;
      this.#cached.add(server);
      // What the cache holds was shown before, but a cache from before the scan (or another mode) is screened all the same.
      this.#setServerTools(server, this.#options.screen.tools(server, tools, { cached: true }));
    }
    const { cacheTtlMs, clock } = this.#options;
    this.#stale = cacheTtlMs !== undefined && clock() - savedAt > cacheTtlMs;
  }

  /** After the pool's start: a lazy server whose tools came from a stale cache is connected once, so its list is fetched afresh. */
  #refreshStale(): void {
    if (!this.#stale) return;
    const { pool, logger, cacheTtlMs } = this.#options;
    const idle = pool.status().filter((s) => s.state === "idle" && this.#cached.has(s.name));
    if (idle.length > 0)
      logger.info(`the catalog cache is older than ${cacheTtlMs} ms: connecting ${idle.map((s) => s.name).join(", ")} to list their tools afresh`);
    for (const { name } of idle)
      void pool.client?.(name).catch((error: Error) => logger.warn(`[${name}] refreshing its cached tools failed: ${error.message}`));
  }

  /** Resolves true once `done()` holds (checked on every server state change), or false after `timeoutMs`. */
  #waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
    if (done()) return Promise.resolve(true);
    const { pool } = this.#options;
    return new Promise((resolve) => {
      const finish = (value: boolean) => {
        clearTimeout(timer);
        pool.off("state", onState);
        resolve(value);
      };
      const onState = () => {
        if (done()) finish(true);
      };
      const timer = setTimeout(() => finish(false), Math.max(0, timeoutMs));
      pool.on("state", onState);
    });
  }

  #scheduleSave(): void {
    if (!this.#options.cache) return;
    clearTimeout(this.#saveTimer);
    this.#saveTimer = setTimeout(() => void this.#save(), CACHE_SAVE_DELAY_MS);
    this.#saveTimer.unref();
  }

  async #save(): Promise<void> {
    this.#saveTimer = undefined;
    const { catalog, cache, logger } = this.#options;
    const servers = new Map(catalog.servers().map((s) => [s, catalog.entries(s).map((e) => e.tool)]));
    const instructions = new Map<string, string>();
    const eras = new Map<string, RememberedEra>();
    for (const server of servers.keys()) {
      const text = this.instructions(server);
      if (text) instructions.set(server, text);
      const era = this.era(server);
      if (era) eras.set(server, era);
    }
    try {
      await cache?.save(servers, this.#options.clock(), { instructions, eras });
    } catch (error) {
      logger.warn(`could not write the catalog cache: ${(error as Error).message}`);
    }
  }

  #setServerTools(server: string, tools: ToolDefinition[]): void {
    const { catalog, modules } = this.#options;
    catalog.setServerTools(server, tools);
    modules.setServer(server, catalog.entries(server).map(codegenToolOf));
    this.emit("toolsChanged");
  }
}
