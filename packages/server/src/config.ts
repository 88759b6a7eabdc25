import { ConfigError, SettingsReader, interpolate, isSettingsObject, loadConfigFile, parseConfig, parseInlineServers, type PoolConfig } from "@codemux/pool";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { MAX_INLINE_BYTES } from "./defaults";
import { RESULT_FORMATS, type ResultFormat } from "./render/toon";
import { SCAN_MODES, type ScanMode } from "./screen";
import { STATE_KEY_MIN_BYTES, STATE_KEY_VARIABLE } from "./signed-state";

export interface ResolveConfigOptions extends FindConfigOptions {
  /** Servers given on the command line after `--`. */
  inline?: string[];
  /** The built-in default, used when nothing else is configured. */
  fallback: () => PoolConfig;
  /** The config file already read (its text), so that a start reads it once: used instead of looking it up and reading it. */
  loaded?: { file: string; text: string };
}

export interface FindConfigOptions {
  /** `--config FILE` */
  configPath?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** A config file the lookup found, and the step that named or found it. */
export interface ConfigLocation {
  file: string;
  step: "--config" | "CODEMUX_CONFIG" | "./codemux.json" | "codemux home";
}

/** Where codemux keeps its own files (the config `codemux install` writes, caches, logins): `$CODEMUX_HOME`, else `~/.codemux`. */
export function codemuxHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.CODEMUX_HOME || join(homedir(), ".codemux");
}

/** `<codemux home>/codemux.json`: the config `codemux install` and `codemux import` write. */
export function homeConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(codemuxHome(env), "codemux.json");
}

/**
 * The one config lookup: `--config`, else `$CODEMUX_CONFIG`, else `./codemux.json`, else
 * `<codemux home>/codemux.json`; undefined means the built-in default. A file named by the first two
 * is returned even when missing (loading it says so); the last two are steps only when they exist.
 */
export function findConfigFile(options: FindConfigOptions = {}): ConfigLocation | undefined {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  if (options.configPath) return { file: resolve(cwd, options.configPath), step: "--config" };
  if (env.CODEMUX_CONFIG) return { file: resolve(cwd, env.CODEMUX_CONFIG), step: "CODEMUX_CONFIG" };
  const local = resolve(cwd, "codemux.json");
  if (existsSync(local)) return { file: local, step: "./codemux.json" };
  const home = homeConfigFile(env);
  return existsSync(home) ? { file: home, step: "codemux home" } : undefined;
}

/**
 * The config to serve: the file `findConfigFile` finds, else the built-in default; servers given inline
 * are added to a config file's (a name in both is an error), or served alone when there is no file.
 */
export async function resolveConfig(options: ResolveConfigOptions): Promise<PoolConfig> {
  const env = options.env ?? process.env;
  const inline = options.inline && options.inline.length > 0 ? parseInlineServers(options.inline, env) : undefined;
  const found = options.loaded ? undefined : findConfigFile(options);
  const file = options.loaded
    ? parseConfig(options.loaded.text, { file: options.loaded.file, env })
    : found
      ? await loadConfigFile(found.file, env)
      : undefined;
  if (!inline) return file ?? options.fallback();
  if (!file) return inline;
  const clash = inline.servers.find((s) => file.servers.some((f) => f.name === s.name));
  if (clash)
    throw new ConfigError(`The server "${clash.name}" is both in ${file.source} and given inline after --; rename one of them.`, { file: file.source });
  return {
    ...file,
    servers: [...file.servers, ...inline.servers],
    source: `${file.source} + servers given inline`,
    warnings: [...(file.warnings ?? []), ...(inline.warnings ?? [])],
  };
}

/** What a global spill threshold may be, in words: a bound always holds, so neither 0 nor "unlimited". */
export const SPILL_BYTES_RULE = `a whole number of bytes from 1 to ${MAX_INLINE_BYTES}; larger results are kept as handles, so 0 and "unlimited" are not allowed`;

export function isSpillBytes(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= MAX_INLINE_BYTES;
}

/** The config's top-level `spillBytes` (results larger are kept as handles), or undefined when it has none. */
export function spillBytesOf(config: unknown, file: string): number | undefined {
  const value = typeof config === "object" && config !== null && !Array.isArray(config) ? (config as Record<string, unknown>).spillBytes : undefined;
  if (value === undefined) return undefined;
  if (!isSpillBytes(value)) throw new ConfigError(`Invalid config ${file}: spillBytes: expected ${SPILL_BYTES_RULE}.`, { file });
  return value;
}

/** The config's top-level `resultFormat` ("json" or "toon"), or undefined when it has none. */
export function resultFormatOf(config: unknown, file: string): ResultFormat | undefined {
  const value = isSettingsObject(config) ? config.resultFormat : undefined;
  if (value === undefined) return undefined;
  if (!RESULT_FORMATS.includes(value as ResultFormat))
    throw new ConfigError(
      `Invalid config ${file}: resultFormat: expected "json" (results as the tools give them) or "toon" (JSON re-encoded as TOON where shorter).`,
      {
        file,
      },
    );
  return value as ResultFormat;
}

/** The config's `tracing`: traces over OTLP/HTTP without the OTEL_* variables (which win where both say something). */
export interface TracingSettings {
  /** Sends traces (true), or leaves it to the OTEL_* variables (false, the default). OTEL_SDK_DISABLED=true turns them off whatever this says. */
  enabled: boolean;
  /** The collector's OTLP/HTTP base URL (`/v1/traces` is added), when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT does not name one; http://localhost:4318 without either. */
  endpoint?: string;
  /** `service.name`, when OTEL_SERVICE_NAME does not name it; "codemux" without either. */
  serviceName?: string;
}

const TRACING_KEYS = ["enabled", "endpoint", "serviceName"] as const;

/** The config's `tracing` block, checked (an unknown key names the nearest known one); undefined when it has none. */
export function tracingOf(config: unknown, file: string): TracingSettings | undefined {
  const value = isSettingsObject(config) ? config.tracing : undefined;
  if (value === undefined) return undefined;
  const read = new SettingsReader((where, message) => {
    throw new ConfigError(`Invalid config ${file}: ${where}: ${message}`, { file });
  });
  const block = read.object(value, "tracing", TRACING_KEYS);
  const settings: TracingSettings = { enabled: block.enabled === undefined ? false : read.boolean(block.enabled, "tracing.enabled") };
  if (block.endpoint !== undefined) {
    const endpoint = block.endpoint;
    if (typeof endpoint !== "string" || !/^https?:\/\/[^\s]{1,2000}$/.test(endpoint))
      read.fail("tracing.endpoint", 'expected the collector\'s OTLP/HTTP URL, such as "http://localhost:4318"');
    settings.endpoint = endpoint as string;
  }
  if (block.serviceName !== undefined) {
    if (typeof block.serviceName !== "string" || block.serviceName.length === 0 || block.serviceName.length > 200)
      read.fail("tracing.serviceName", 'expected a name of 1 to 200 characters, such as "codemux-gateway"');
    settings.serviceName = block.serviceName as string;
  }
  return settings;
}

/** The config's `security.scan` ("quarantine", the default, "warn" or "off"). */
export function scanModeOf(config: unknown, file: string): ScanMode {
  const security = isSettingsObject(config) ? config.security : undefined;
  if (security === undefined) return "quarantine";
  if (!isSettingsObject(security)) throw new ConfigError(`Invalid config ${file}: security: expected an object such as { "scan": "quarantine" }.`, { file });
  const value = security.scan;
  if (value === undefined) return "quarantine";
  if (!SCAN_MODES.includes(value as ScanMode))
    throw new ConfigError(
      `Invalid config ${file}: security.scan: expected "quarantine" (hold back tools whose text aims at the model until approved, the default), "warn" (list them and log what was found) or "off".`,
      { file },
    );
  return value as ScanMode;
}

/**
 * The config's top-level `stateKey` (the key signing the states codemux hands clients, which every instance
 * behind one balancer must share), `${VAR}` expanded from `env`, or undefined when it has none.
 */
export function stateKeyOf(config: unknown, file: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = isSettingsObject(config) ? config.stateKey : undefined;
  if (value === undefined) return undefined;
  const fail = (reason: string) => new ConfigError(`Invalid config ${file}: stateKey: ${reason}`, { file });
  if (typeof value !== "string") throw fail(`expected a string, such as "\${${STATE_KEY_VARIABLE}}" (keep the key itself out of the file).`);
  const { value: key, missing, unsupported } = interpolate(value, env);
  if (unsupported.length > 0)
    throw fail(`${unsupported[0]?.slice(0, 60)} cannot be expanded here; name an environment variable, as in "\${${STATE_KEY_VARIABLE}}".`);
  if (missing.length > 0)
    throw fail(`the environment variable ${missing.join(", ")} is not set; set it to the key every instance shares (\`openssl rand -hex 32\`).`);
  if (Buffer.byteLength(key) < STATE_KEY_MIN_BYTES)
    throw fail(`the key must be at least ${STATE_KEY_MIN_BYTES} bytes; generate one with \`openssl rand -hex 32\`.`);
  return key;
}
