import type { Logger } from "@codemux/core";
import { homedir } from "node:os";
import { join } from "node:path";
import { PluginChain, orderPlugins } from "./chain";
import { hooksLogger } from "./logger";
import type { Observability, Plugin, PluginInitContext, PluginMetrics, ResultKeeper } from "./types";

export interface PluginHostOptions {
  /** stderr by default; never stdout. */
  logger?: Logger;
  /** Default home of audit logs and pin files: `$CODEMUX_HOME`, else `~/.codemux`. */
  dataDir?: string;
  /** Folder relative option paths are read from; the working directory by default. */
  configDir?: string;
  clock?: () => number;
  observability?: Observability;
  /** Where summarize keeps full results for read_result (codemux's `core.results`). */
  results?: ResultKeeper;
  /** How long a principal's audit lines are kept (the config's `retention`); undefined: no limit. */
  retentionMs?: PluginInitContext["retentionMs"];
  /** Token buckets shared by every instance (Redis), given to plugins' `init`. */
  rateBuckets?: PluginInitContext["rateBuckets"];
  /** A store shared by every instance (Redis), given to plugins' `init`. */
  sharedStore?: PluginInitContext["sharedStore"];
  pinRecords?: PluginInitContext["pinRecords"];
  sharedLists?: PluginInitContext["sharedLists"];
}

/** Where codemux keeps its files: `$CODEMUX_HOME`, else `~/.codemux` (the CLI's rule). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.CODEMUX_HOME || join(homedir(), ".codemux");
}

/** Plugins whose `init` ran: a reload hands an unchanged plugin to the next host, which must not start it again. */
const STARTED = new WeakSet<Plugin>();

/**
 * Owns a set of plugins: starts them once (in priority order), runs them around calls, closes
 * them. The call pipeline middleware and wrapWithProxy both run on one of these.
 */
export class PluginHost {
  readonly chain: PluginChain;
  readonly logger: Logger;
  readonly #plugins: readonly Plugin[];
  readonly #options: PluginHostOptions;
  #observability: Observability | undefined;
  #started: Promise<void> | undefined;
  #ready = false;
  #closed = false;

  constructor(plugins: readonly Plugin[], options: PluginHostOptions = {}) {
    this.logger = options.logger ?? hooksLogger;
    this.#options = options;
    this.#observability = options.observability;
    this.chain = new PluginChain(plugins, {
      logger: this.logger,
      ...(options.clock ? { clock: options.clock } : {}),
      observability: () => this.#observability,
    });
    this.#plugins = orderPlugins(plugins);
  }

  get plugins(): readonly Plugin[] {
    return this.#plugins;
  }

  /** Attaches (or replaces) the metrics and request-log hooks, e.g. once HTTP serving starts. */
  observe(observability: Observability | undefined): void {
    this.#observability = observability;
  }

  /** Runs every plugin's `init` once, in priority order; a failing init stops start-up with the plugin's name. */
  start(): Promise<void> {
    this.#started ??= this.#init().then(() => {
      this.#ready = true;
    });
    return this.#started;
  }

  /** Whether every plugin's `init` has succeeded: a call then need not wait on `start`. */
  get ready(): boolean {
    return this.#ready;
  }

  /** Deletes what each plugin keeps for `principal`; counts by plugin name (`{ audit: 12 }`). */
  async forget(principal: string): Promise<Record<string, number>> {
    await this.#started;
    const report: Record<string, number> = {};
    for (const plugin of this.#plugins) if (plugin.forget) report[plugin.name] = await plugin.forget(principal);
    return report;
  }

  /** Closes every plugin, last first; `keep` stays open (a reload carries those plugins on to the next host). */
  async close(keep: ReadonlySet<Plugin> = new Set()): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#started?.catch(() => undefined);
    for (const plugin of [...this.#plugins].reverse()) {
      if (keep.has(plugin)) continue;
      try {
        await plugin.close?.();
      } catch (error) {
        this.logger.warn(`plugin "${plugin.name}" close failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  async #init(): Promise<void> {
    const metrics: PluginMetrics = {
      increment: (name, labels, value) => {
        try {
          this.#observability?.metrics?.increment(name, labels, value);
        } catch {
          // Metrics are best-effort.
        }
      },
    };
    for (const plugin of this.#plugins) {
      if (!plugin.init || STARTED.has(plugin)) continue;
      try {
        await plugin.init({
          logger: this.logger,
          dataDir: this.#options.dataDir ?? defaultDataDir(),
          configDir: this.#options.configDir ?? process.cwd(),
          clock: this.#options.clock ?? Date.now,
          metrics,
          ...(this.#options.results ? { results: this.#options.results } : {}),
          ...(this.#options.retentionMs ? { retentionMs: this.#options.retentionMs } : {}),
          ...(this.#options.rateBuckets ? { rateBuckets: this.#options.rateBuckets } : {}),
          ...(this.#options.sharedStore ? { sharedStore: this.#options.sharedStore } : {}),
          ...(this.#options.pinRecords ? { pinRecords: this.#options.pinRecords } : {}),
          ...(this.#options.sharedLists ? { sharedLists: this.#options.sharedLists } : {}),
        });
        STARTED.add(plugin);
      } catch (error) {
        throw new Error(`Plugin "${plugin.name}" could not start: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    }
  }
}
