import { PluginConfigError } from "./errors";
import { closestKey, closestNames, type Logger, type MetaTool, type SecretMask } from "@codemux/core";
import { access } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { canonicalJson } from "./canonical";
import { defaultDataDir, type PluginHost } from "./host";
import { middlewareOf, type PluginMiddleware } from "./middleware";
import { PluginSet, type PluginChanges, type PluginSpec, type PreparedPlugins } from "./plugin-set";
import { auditPlugin } from "./plugins/audit";
import { cachePlugin } from "./plugins/cache";
import { guardPlugin } from "./plugins/guard";
import { pinPlugin, type PinScreen, type SeenTool, type Withheld } from "./plugins/pin";
import { rateLimitPlugin } from "./plugins/rate-limit";
import { redactPlugin } from "./plugins/redact";
import { memoryPlugin } from "./plugins/memory";
import { summarizePlugin } from "./plugins/summarize";
import { hooksLogger } from "./logger";
import type { RecordRedactor, Redactor } from "./redactor";
import type { Observability, Plugin, PluginInitContext, ResultKeeper } from "./types";

const ms = z
  .number()
  .int()
  .positive()
  .max(24 * 3_600_000);
const globs = z.array(z.string().min(1).max(300)).max(1000);
const common = {
  enabled: z.boolean().optional(),
  priority: z.number().int().min(-1_000_000).max(1_000_000).optional(),
  failClosed: z.boolean().optional(),
  timeoutMs: ms.optional(),
};

const patternSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(60)
      .regex(/^[A-Za-z0-9_-]+$/, "use letters, digits, - and _"),
    regex: z.string().min(1).max(1000),
    flags: z
      .string()
      .regex(/^[imsu]*$/, "may hold only i, m, s and u")
      .optional(),
    group: z.number().int().min(1).max(9).optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    try {
      new RegExp(p.regex, p.flags);
    } catch (error) {
      ctx.addIssue({ code: "custom", path: ["regex"], message: `not a valid regular expression (${(error as Error).message})` });
    }
  });

const BUILT_INS = {
  audit: z
    .object({
      ...common,
      file: z.string().min(1).optional(),
      maxBytes: z.number().int().min(1024).optional(),
      files: z.number().int().min(1).max(100).optional(),
      includeArguments: z.boolean().optional(),
    })
    .strict(),
  cache: z
    .object({
      ...common,
      ttlMs: ms.optional(),
      maxBytes: z.number().int().positive().optional(),
      maxEntryBytes: z.number().int().positive().optional(),
      readOnly: z.boolean().optional(),
      tools: globs.optional(),
      exclude: globs.optional(),
      perPrincipal: z.boolean().optional(),
    })
    .strict(),
  "rate-limit": z
    .object({
      ...common,
      limits: z
        .array(
          z
            .object({
              by: z.array(z.enum(["principal", "server", "tool"])).max(3),
              calls: z.number().int().positive(),
              perMs: ms,
              burst: z.number().int().positive().optional(),
              tools: globs.optional(),
            })
            .strict(),
        )
        .max(100)
        .optional(),
    })
    .strict(),
  redact: z
    .object({
      ...common,
      builtIns: z.union([z.boolean(), z.array(z.string())]).optional(),
      patterns: z.array(patternSchema).max(100).optional(),
      maxScanChars: z.number().int().positive().optional(),
    })
    .strict(),
  guard: z
    .object({
      ...common,
      destructive: z.boolean().optional(),
      confirm: globs.optional(),
      deny: globs.optional(),
      allow: globs.optional(),
      answerTimeoutMs: ms.optional(),
    })
    .strict(),
  pin: z.object({ ...common, file: z.string().min(1).optional(), quarantineNewServers: z.boolean().optional() }).strict(),
  summarize: z
    .object({
      ...common,
      minChars: z.number().int().positive().optional(),
      maxInputChars: z.number().int().positive().optional(),
      maxTokens: z.number().int().positive().max(100_000).optional(),
      samplingTimeoutMs: ms.optional(),
      tools: globs.optional(),
      origins: z.array(z.string().min(1)).optional(),
      keepMaxChars: z.number().int().positive().optional(),
      keepTtlMs: ms.optional(),
    })
    .strict(),
  memory: z
    .object({
      ...common,
      tools: globs.optional(),
      maxEntries: z.number().int().positive().max(10_000).optional(),
      maxEntryChars: z.number().int().positive().max(100_000).optional(),
      ttlMs: ms.optional(),
    })
    .strict(),
} as const;

type BuiltInName = keyof typeof BUILT_INS;
export const BUILT_IN_PLUGINS = Object.keys(BUILT_INS) as BuiltInName[];

const moduleSchema = z.object({ ...common, module: z.string().min(1), options: z.record(z.string(), z.unknown()).optional() }).strict();

export interface LoadPluginsOptions {
  /** The parsed JSON of the config file (its `plugins` section is read; none means no plugins). */
  config: unknown;
  /** The config file, named in error messages; its folder is `configDir` unless given. */
  configFile?: string;
  /** Folder that `module` paths and relative files are resolved from. */
  configDir?: string;
  logger?: Logger;
  /** codemux's own folder (`$CODEMUX_HOME` or `~/.codemux`): audit logs and pins go there by default. */
  dataDir?: string;
  clock?: () => number;
  /** codemux's result store (`core.results`), so summarize answers with read_result handles. */
  results?: ResultKeeper;
  observability?: Observability;
  /** How long a principal's audit lines are kept (the config's `retention`); undefined: no limit. */
  retentionMs?: PluginInitContext["retentionMs"];
  /** Token buckets shared by every instance (Redis): the rate-limit plugin's limit holds across them. */
  rateBuckets?: PluginInitContext["rateBuckets"];
  /** A store shared by every instance (Redis), for the cache plugin. */
  sharedStore?: PluginInitContext["sharedStore"];
  /** Pin records shared by every instance (Redis), for the pin plugin. */
  pinRecords?: PluginInitContext["pinRecords"];
  /**
   * The config's `security.scan`: with "quarantine" the pin plugin also holds definitions the scanner rates `high`
   * or worse until approved, and is started for that alone (changes not pinned) when the config does not turn it on.
   */
  scanMode?: (config: unknown) => "quarantine" | "warn" | "off";
  /** Lists shared by every instance (Redis), for the memory plugin. */
  sharedLists?: PluginInitContext["sharedLists"];
}

/** Plugins loaded from the config, started and ready to go into the call pipeline; `reload` changes them while serving. */
export interface LoadedPlugins {
  /** The plugins in force, in run order. */
  readonly plugins: readonly Plugin[];
  /** One `ToolCallMiddleware` for `CodemuxOptions.middleware`; passes calls straight on when there are no plugins. */
  middleware: PluginMiddleware;
  /** The host of the plugins in force. */
  readonly host: PluginHost;
  /** Metrics and request-log hooks, attachable once HTTP serving starts. */
  observe(observability: Observability | undefined): void;
  /** Tell the plugins the catalog changed (pin records every definition on first sight, not only on first call). */
  toolsChanged(tools: readonly SeenTool[]): Promise<void>;
  /** The pin plugin's judgement of a server's tools as listed now: those held back, each with what the model may see instead (none without pin). */
  screen(tools: readonly SeenTool[]): Withheld;
  /** The pin plugin's judgement of a server's flagged instructions, resources or prompts of one kind: the names held back (every one without pin). */
  holdItems: PinScreen["holdItems"];
  /** Called when a tool held back may be shown again (an approval): the host screens its catalog again. */
  onRelease(listener: () => void): void;
  /** The redact plugin's redactor while it is on. */
  readonly redactor: Redactor | undefined;
  /** Masks what codemux keeps of calls (audit lines, the jobs journal): by the redact plugin's patterns while it is on, else the built-in ones. */
  records: RecordRedactor;
  /** Masks downstream text on its other paths to clients and to disk (`CodemuxOptions.mask`): the redact plugin's patterns while it is on, nothing without it. */
  mask: SecretMask;
  /** Deletes what the plugins keep for `principal` (audit lines); counts by plugin name. */
  forget(principal: string): Promise<Record<string, number>>;
  /** Meta-tools plugins offer (memory's `memory`), for the host to list beside its own; a reload cannot change them. */
  metaTools: readonly MetaTool[];
  /**
   * Checks and starts the plugins of a changed config beside those in force, without putting them in force:
   * `commit()` then swaps them in at once, `discard()` drops them. A mistake rejects with a `PluginConfigError`
   * and changes nothing. Reloads take turns: the next waits until this one is committed or discarded.
   */
  prepare(config: unknown): Promise<PreparedPlugins>;
  /** `prepare` and `commit` at once. */
  reload(config: unknown): Promise<PluginChanges>;
  close(): Promise<void>;
}

/**
 * Reads the `plugins` section of a config file, validates it (a `PluginConfigError` naming the field),
 * loads local modules relative to the config's folder, and starts every plugin.
 *
 * @example
 * const plugins = await loadPlugins({ config: JSON.parse(text), configFile: "./codemux.json", logger });
 * const core = new Codemux({ config, middleware: [plugins.middleware], mask: plugins.mask });
 * // the file changed: the new plugins are in force from the next call on
 * await plugins.reload(JSON.parse(await readFile("./codemux.json", "utf8")));
 */
export async function loadPlugins(options: LoadPluginsOptions): Promise<LoadedPlugins> {
  const file = options.configFile ?? "config";
  const configDir = options.configDir ?? (options.configFile ? dirname(resolve(options.configFile)) : process.cwd());
  const set = await PluginSet.start({
    file,
    specs: (config, records) => pluginSpecs(config, { file, configDir, records, quarantine: options.scanMode?.(config) === "quarantine" }),
    config: options.config,
    host: {
      logger: options.logger ?? hooksLogger,
      dataDir: options.dataDir ?? defaultDataDir(),
      configDir,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.results ? { results: options.results } : {}),
      ...(options.retentionMs ? { retentionMs: options.retentionMs } : {}),
      ...(options.rateBuckets ? { rateBuckets: options.rateBuckets } : {}),
      ...(options.sharedStore ? { sharedStore: options.sharedStore } : {}),
      ...(options.pinRecords ? { pinRecords: options.pinRecords } : {}),
      ...(options.sharedLists ? { sharedLists: options.sharedLists } : {}),
    },
    ...(options.observability ? { observability: options.observability } : {}),
  });
  const metaTools = set.current().host.plugins.flatMap((p) => p.metaTools ?? []);
  const releaseListeners: Array<() => void> = [];
  const wired = new WeakSet<PinScreen>();
  // A reload may start another pin plugin: it tells the same listeners.
  const currentPin = () => {
    const pin = pinOf(set);
    if (pin && !wired.has(pin)) {
      wired.add(pin);
      pin.onRelease(() => {
        for (const listener of releaseListeners) listener();
      });
    }
    return pin;
  };
  return {
    get plugins() {
      return set.current().host.plugins;
    },
    middleware: middlewareOf(set),
    get host() {
      return set.current().host;
    },
    observe: (observability) => set.observe(observability),
    toolsChanged: (tools) => set.toolsChanged(tools),
    screen: (tools) => currentPin()?.screen(tools) ?? new Map(),
    holdItems: (scope, flagged) => currentPin()?.holdItems(scope, flagged) ?? new Set(flagged.map((f) => f.name)),
    onRelease: (listener) => {
      releaseListeners.push(listener);
      currentPin();
    },
    get redactor() {
      return set.redactor;
    },
    records: set.records,
    mask: set.mask,
    forget: (principal) => set.current().host.forget(principal),
    metaTools,
    prepare: (config) => set.prepare(config),
    reload: async (config) => (await set.prepare(config)).commit(),
    close: () => set.close(),
  };
}

/** The pin plugin in force, when it is on (a reload may turn it on or off). */
function pinOf(set: PluginSet): PinScreen | undefined {
  const plugin = set.current().host.plugins.find((p) => p.name === "pin") as (Plugin & Partial<PinScreen>) | undefined;
  return typeof plugin?.screen === "function" ? (plugin as unknown as PinScreen) : undefined;
}

/** The checked entries of a config's `plugins` section (none without one); throws a `PluginConfigError` naming the field of a mistake. */
function pluginSpecs(config: unknown, context: { file: string; configDir: string; records: RecordRedactor; quarantine?: boolean }): PluginSpec[] {
  const specs = configuredSpecs(config, context);
  if (!context.quarantine) return specs;
  // The scan's quarantine keeps its approvals in the pin book: pin runs for that alone when the config does not turn it on.
  if (!specs.some((spec) => spec.name === "pin"))
    specs.push({ name: "pin", key: keyOf("pin", { scan: true, changes: false }), make: async () => pinPlugin({ scan: true, changes: false }) });
  return specs;
}

function configuredSpecs(config: unknown, context: { file: string; configDir: string; records: RecordRedactor; quarantine?: boolean }): PluginSpec[] {
  const { file, configDir } = context;
  const fail = (where: string, message: string): never => {
    throw new PluginConfigError(`Invalid config ${file}: ${where}: ${message}`, { file });
  };
  const section = isObject(config) ? config.plugins : undefined;
  if (section === undefined || section === null) return [];
  if (!isObject(section)) fail("plugins", 'expected an object whose keys are plugin names, e.g. { "audit": {}, "cache": { "ttlMs": 60000 } }');
  const specs: PluginSpec[] = [];
  for (const [name, raw] of Object.entries(section as Record<string, unknown>)) {
    const where = `plugins.${name}`;
    if (raw === false) continue;
    const value = raw === true ? {} : raw;
    if (!isObject(value)) fail(where, "expected an object of options (or true to use the defaults, false to turn it off)");
    const record = value as Record<string, unknown>;
    if (record.enabled === false) continue;
    if (name in BUILT_INS && record.module === undefined) {
      const schema = BUILT_INS[name as BuiltInName];
      const parsed = schema.safeParse(record);
      if (!parsed.success) fail(...issueOf(where, parsed.error, schema));
      const opts: Record<string, unknown> = { ...(parsed.data as Record<string, unknown>), ...(name === "pin" && context.quarantine ? { scan: true } : {}) };
      specs.push({ name, key: keyOf(name, opts), make: async () => withOverrides(builtIn(name as BuiltInName, opts, context.records), opts) });
      continue;
    }
    if (record.module === undefined) {
      const close = closestNames(name, BUILT_IN_PLUGINS, 1)[0];
      fail(
        where,
        `not a built-in plugin${close ? ` (did you mean "${close}"?)` : ""}; built-ins are ${BUILT_IN_PLUGINS.join(", ")}, and a plugin of your own needs "module": "./my-plugin.js"`,
      );
    }
    const parsed = moduleSchema.safeParse(record);
    if (!parsed.success) fail(...issueOf(where, parsed.error, moduleSchema));
    const entry = parsed.data!;
    const module = { name, module: entry.module, options: entry.options ?? {}, configDir, fail: (message: string) => fail(`${where}.module`, message) };
    // The module's path as resolved: the same text in a config elsewhere is another module.
    specs.push({
      name,
      key: keyOf(name, { ...entry, module: resolve(configDir, entry.module) }),
      make: async () => withOverrides(await loadModule(module), entry),
    });
  }
  return specs;
}

/** What a reload compares: the entry's canonical JSON (key order aside). Options are small JSON, well under the bound. */
function keyOf(name: string, options: Record<string, unknown>): string {
  return canonicalJson({ name, options }) ?? JSON.stringify({ name, options });
}

function builtIn(name: BuiltInName, opts: Record<string, unknown>, records: RecordRedactor): Plugin {
  switch (name) {
    case "audit":
      // Masks by the redact plugin's patterns while it is on, whichever reload turned it on or off.
      return auditPlugin({ ...opts, redactor: records });
    case "cache":
      return cachePlugin(opts);
    case "rate-limit":
      return rateLimitPlugin(opts);
    case "redact": {
      const patterns = (opts.patterns as Array<{ name: string; regex: string; flags?: string; group?: number }> | undefined)?.map((p) => ({
        name: p.name,
        regex: new RegExp(p.regex, `${p.flags ?? ""}g`),
        ...(p.group ? { group: p.group } : {}),
      }));
      return redactPlugin({ ...opts, ...(patterns ? { patterns } : {}) } as Parameters<typeof redactPlugin>[0]);
    }
    case "guard":
      return guardPlugin(opts);
    case "pin":
      return pinPlugin(opts);
    case "summarize":
      return summarizePlugin(opts);
    case "memory":
      return memoryPlugin(opts);
  }
}

/** The config's priority, failClosed and timeoutMs over the plugin's own, without copying the plugin (its methods keep their `this`). */
function withOverrides(plugin: Plugin, opts: { priority?: unknown; failClosed?: unknown; timeoutMs?: unknown }): Plugin {
  if (opts.priority === undefined && opts.failClosed === undefined && opts.timeoutMs === undefined) return plugin;
  return Object.create(plugin, {
    ...(typeof opts.priority === "number" ? { priority: { value: opts.priority, enumerable: true } } : {}),
    ...(typeof opts.failClosed === "boolean" ? { failClosed: { value: opts.failClosed, enumerable: true } } : {}),
    ...(typeof opts.timeoutMs === "number" ? { timeoutMs: { value: opts.timeoutMs, enumerable: true } } : {}),
  }) as Plugin;
}

/** A module's plugin: its default export (or `plugin`, or `createPlugin`), a plugin object or a factory given the options. */
async function loadModule(options: {
  name: string;
  module: string;
  options: Record<string, unknown>;
  configDir: string;
  fail: (message: string) => never;
}): Promise<Plugin> {
  const { name, module, fail } = options;
  if (!/^(?:\.{1,2}[\\/]|[\\/]|[A-Za-z]:[\\/])/.test(module)) fail(`"${module}" must be a path to a file (start it with ./), not a package name`);
  const path = isAbsolute(module) ? module : resolve(options.configDir, module);
  try {
    await access(path);
  } catch {
    fail(`cannot load "${module}" (no file at ${path})`);
  }
  let exported: Record<string, unknown>;
  try {
    exported = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    return fail(`cannot load "${module}" (${(error as Error).message.split("\n")[0]!.slice(0, 300)})`);
  }
  const candidate = exported.default ?? exported.plugin ?? exported.createPlugin;
  let plugin: unknown = candidate;
  if (typeof candidate === "function") {
    try {
      plugin = await (candidate as (o: unknown) => unknown)(options.options);
    } catch (error) {
      return fail(`"${module}" threw while making its plugin (${(error as Error).message.slice(0, 300)})`);
    }
  }
  if (!isObject(plugin)) return fail(`"${module}" must export a plugin object, or a function of the options that returns one, as its default export`);
  const p = plugin as Record<string, unknown>;
  for (const hook of ["init", "close", "beforeCall", "afterCall", "onError"]) {
    if (p[hook] !== undefined && typeof p[hook] !== "function") fail(`the plugin of "${module}" has a "${hook}" that is not a function`);
  }
  if (p.name === undefined) return Object.assign(Object.create(plugin) as Plugin, { name });
  if (typeof p.name !== "string" || !p.name) fail(`the plugin of "${module}" needs a "name" string`);
  return plugin as unknown as Plugin;
}

/** A mistake's field and sentence; an unknown option gets the one meant when it is a near miss, and the options taken there. */
function issueOf(where: string, error: z.ZodError, schema: z.ZodType): [string, string] {
  // A misspelled option also leaves the one meant missing: the unknown one says more.
  const issue = error.issues.find((i) => i.code === "unrecognized_keys") ?? error.issues[0];
  if (!issue) return [where, "invalid entry"];
  const path = [where, ...issue.path.map(String)].join(".");
  if (issue.code === "unrecognized_keys") {
    const accepted = optionsAt(schema, issue.path);
    const [first] = issue.keys;
    const meant = issue.keys.length === 1 && first !== undefined ? closestKey(first, accepted) : undefined;
    const hint = issue.path.length === 0 ? HINTS[where.slice("plugins.".length)] : undefined;
    return [
      path,
      `unknown option ${issue.keys.map((k) => `"${k}"`).join(", ")}${meant ? ` (did you mean "${meant}"?)` : ""}; the options here are ${accepted.join(", ")}${hint ? `. ${hint}` : ""}`,
    ];
  }
  let message = issue.message.replace(/^Invalid input: /, "");
  if (/received undefined$/.test(message)) message = "required";
  return [path, message];
}

/** What a plugin's options are for, where a name alone would not say (a rate is a count over a window, not "per minute"). */
const HINTS: Record<string, string> = {
  "rate-limit": 'A limit of 60 calls a minute for each principal is "limits": [{ "by": ["principal"], "calls": 60, "perMs": 60000 }]',
};

/** The option names an object schema takes at `path` (through optional fields and array items). */
function optionsAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let node: unknown = schema;
  for (const step of path) {
    node = unwrapped(node);
    if (node instanceof z.ZodArray) node = node.element;
    else if (node instanceof z.ZodObject) node = (node.shape as Record<string, unknown>)[String(step)];
    else return [];
  }
  node = unwrapped(node);
  return node instanceof z.ZodObject ? Object.keys(node.shape) : [];
}

function unwrapped(node: unknown): unknown {
  let inner = node;
  while (inner instanceof z.ZodOptional) inner = inner.unwrap();
  return inner;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
