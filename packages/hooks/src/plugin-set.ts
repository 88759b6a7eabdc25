import type { SecretMask } from "@codemux/core";
import { PluginConfigError } from "./errors";
import { PluginHost, type PluginHostOptions } from "./host";
import type { GenerationSource, PluginGeneration } from "./middleware";
import type { SeenTool } from "./plugins/pin";
import { Redactor, type RecordRedactor } from "./redactor";
import type { Observability, Plugin } from "./types";

/** One entry of the `plugins` section, checked: how to make its plugin, and what a reload compares to keep the running one. */
export interface PluginSpec {
  /** Its key in the section. */
  name: string;
  /** The entry as configured (canonical JSON): while it stays the same, a reload keeps the plugin running with its state. */
  key: string;
  make(): Promise<Plugin>;
}

/** The plugins a reload turned on, off, or gave other options, by their names in the `plugins` section. */
export interface PluginChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

/** A reload's plugins, started beside those in force. */
export interface PreparedPlugins {
  readonly changes: PluginChanges;
  /** Puts them in force at once: calls from now on run on them; calls in flight finish on the plugins they began with, which close after. */
  commit(): PluginChanges;
  /** Closes the plugins started for it; what is in force stays. */
  discard(): Promise<void>;
}

interface SetOptions {
  /** The config file, named in errors. */
  file: string;
  /** Reads a config's `plugins` section; throws a PluginConfigError naming the field of a mistake. */
  specs: (config: unknown, records: RecordRedactor) => PluginSpec[];
  config: unknown;
  host: PluginHostOptions;
  observability?: Observability;
}

/** The built-in patterns, for records while the redact plugin is off. */
const BUILT_IN_REDACTOR = new Redactor();

/** One set of plugins in force: its host, the entries it was made of, and the calls running on its chain. */
class Generation implements PluginGeneration {
  readonly host: PluginHost;
  readonly entries: ReadonlyMap<string, { key: string; plugin: Plugin }>;
  #calls = 0;
  #idle: Array<() => void> = [];

  constructor(host: PluginHost, entries: ReadonlyMap<string, { key: string; plugin: Plugin }>) {
    this.host = host;
    this.entries = entries;
  }

  enter(): () => void {
    this.#calls++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (--this.#calls === 0) for (const resolve of this.#idle.splice(0)) resolve();
    };
  }

  /** Resolves once no call runs on this generation's chain. */
  idle(): Promise<void> {
    return this.#calls === 0 ? Promise.resolve() : new Promise((resolve) => this.#idle.push(resolve));
  }

  /** The built-in redact plugin's redactor, when it is in this generation. */
  get redactor(): Redactor | undefined {
    return (this.entries.get("redact")?.plugin as { redactor?: unknown } | undefined)?.redactor as Redactor | undefined;
  }
}

/**
 * The plugins of a config, replaceable while serving: a reload makes the entries that changed, keeps the
 * running plugin of each entry that did not (with its state: a rate limit's counts, a cache's entries),
 * starts the new ones beside the old, then swaps the chain between calls. A plugin no reload can change
 * (one that offers tools to clients: memory's `memory`) refuses the reload instead.
 */
export class PluginSet implements GenerationSource {
  readonly #options: SetOptions;
  #current!: Generation;
  /** Generations replaced but with calls still running on them, closing once those end. */
  readonly #retiring = new Set<Promise<void>>();
  /** Reloads take turns: the end of the one under way. */
  #turn: Promise<void> = Promise.resolve();
  #observability: Observability | undefined;
  #tools: readonly SeenTool[] | undefined;
  #closed = false;
  /** By the redact plugin's patterns while it is on, else the built-in ones. */
  readonly records: RecordRedactor = {
    text: (input) => (this.redactor ?? BUILT_IN_REDACTOR).text(input),
    value: (input, options) => (this.redactor ?? BUILT_IN_REDACTOR).value(input, options),
  };
  /** By the redact plugin's patterns while it is on; nothing without it. */
  readonly mask: SecretMask = {
    text: (text) => this.redactor?.text(text).text ?? text,
    value: <T>(value: T) => (this.redactor ? (this.redactor.value(value).value as T) : value),
  };

  private constructor(options: SetOptions) {
    this.#observability = options.observability;
    // Plugins report to what `observe` attaches later, whichever generation started them.
    const observability: Observability = {
      metrics: { increment: (name, labels, value) => this.#observability?.metrics?.increment(name, labels, value) },
      onCall: (record) => this.#observability?.onCall?.(record),
    };
    this.#options = { ...options, host: { ...options.host, observability } };
  }

  /** Makes and starts the plugins of `options.config`. */
  static async start(options: SetOptions): Promise<PluginSet> {
    const set = new PluginSet(options);
    set.#current = (await makeGeneration(options.specs(options.config, set.records), undefined, set.#options)).generation;
    return set;
  }

  current(): PluginGeneration {
    return this.#current;
  }

  get redactor(): Redactor | undefined {
    // Undefined while the first generation is made (nothing masks before it starts).
    return this.#current?.redactor;
  }

  observe(observability: Observability | undefined): void {
    this.#observability = observability;
  }

  async toolsChanged(tools: readonly SeenTool[]): Promise<void> {
    this.#tools = tools;
    await seeAll(this.#current.host.plugins, tools);
  }

  async prepare(config: unknown): Promise<PreparedPlugins> {
    const previous = this.#turn;
    let done!: () => void;
    this.#turn = new Promise((resolve) => (done = resolve));
    await previous;
    try {
      if (this.#closed) throw new PluginConfigError("The plugins are closed; codemux is stopping.", { file: this.#options.file });
      const made = await makeGeneration(this.#options.specs(config, this.records), this.#current, this.#options);
      return this.#prepared(made, done);
    } catch (error) {
      done();
      throw error;
    }
  }

  #prepared(made: { generation: Generation; kept: ReadonlySet<Plugin>; changes: PluginChanges }, done: () => void): PreparedPlugins {
    let settled = false;
    const settle = () => {
      if (settled) throw new Error("This reload was committed or discarded already.");
      settled = true;
      done();
    };
    return {
      changes: made.changes,
      commit: () => {
        settle();
        const old = this.#current;
        this.#current = made.generation;
        const retired = old
          .idle()
          .then(() => old.host.close(made.kept))
          .finally(() => this.#retiring.delete(retired));
        this.#retiring.add(retired);
        // pin records what is already listed, as it does when it starts with codemux.
        if (this.#tools) void seeAll(made.generation.host.plugins, this.#tools, new Set(old.host.plugins)).catch(() => undefined);
        return made.changes;
      },
      discard: async () => {
        settle();
        await made.generation.host.close(made.kept);
      },
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#turn;
    await Promise.all(this.#retiring);
    await this.#current.host.close();
  }
}

/**
 * The generation of `specs`: the running plugin of each entry `previous` has unchanged, a new one of the
 * others, all started. A failure closes what it made and rejects with a PluginConfigError.
 */
async function makeGeneration(
  specs: readonly PluginSpec[],
  previous: Generation | undefined,
  options: { host: PluginHostOptions; file: string },
): Promise<{ generation: Generation; kept: ReadonlySet<Plugin>; changes: PluginChanges }> {
  const entries = new Map<string, { key: string; plugin: Plugin }>();
  const kept = new Set<Plugin>();
  const made: Plugin[] = [];
  const closeMade = () => new PluginHost(made, options.host).close();
  try {
    for (const spec of specs) {
      const running = previous?.entries.get(spec.name);
      if (running?.key === spec.key) {
        kept.add(running.plugin);
        entries.set(spec.name, running);
        continue;
      }
      const plugin = await spec.make();
      made.push(plugin);
      entries.set(spec.name, { key: spec.key, plugin });
    }
  } catch (error) {
    await closeMade();
    throw error;
  }
  const changes = changesOf(previous?.entries ?? new Map(), entries);
  if (previous) {
    const fixed = [...changes.added, ...changes.removed, ...changes.changed].find(
      (name) => (previous.entries.get(name)?.plugin.metaTools?.length ?? 0) > 0 || (entries.get(name)?.plugin.metaTools?.length ?? 0) > 0,
    );
    if (fixed !== undefined) {
      await closeMade();
      throw new PluginConfigError(
        `Invalid config ${options.file}: plugins.${fixed}: this plugin offers clients tools of its own, which a reload cannot add, take away or change; restart codemux to turn it on, off or change its options.`,
        { file: options.file },
      );
    }
  }
  const host = new PluginHost(
    [...entries.values()].map((e) => e.plugin),
    options.host,
  );
  try {
    await host.start();
  } catch (error) {
    await host.close(kept);
    throw new PluginConfigError(`Invalid config ${options.file}: plugins: ${(error as Error).message}`, { file: options.file, cause: error });
  }
  return { generation: new Generation(host, entries), kept, changes };
}

function changesOf(before: ReadonlyMap<string, { key: string }>, after: ReadonlyMap<string, { key: string }>): PluginChanges {
  const changes: PluginChanges = { added: [], removed: [], changed: [] };
  for (const [name, entry] of after) {
    const was = before.get(name);
    if (!was) changes.added.push(name);
    else if (was.key !== entry.key) changes.changed.push(name);
  }
  for (const name of before.keys()) if (!after.has(name)) changes.removed.push(name);
  return changes;
}

/** Tells the plugins that look at the catalog (pin) what it lists; `skip` already saw it. */
async function seeAll(plugins: readonly Plugin[], tools: readonly SeenTool[], skip: ReadonlySet<Plugin> = new Set()): Promise<void> {
  for (const plugin of plugins) {
    const see = (plugin as { see?: (tools: readonly SeenTool[]) => Promise<void> }).see;
    if (typeof see === "function" && !skip.has(plugin)) await see.call(plugin, tools);
  }
}
