import { closestNames } from "@codemux/core";
import { parseHttpSettings, type HttpSettings } from "@codemux/http";
import { isSettingsObject, parseJsonc, readConfigText, type PoolConfig } from "@codemux/pool";
import {
  dispatchFilesOf,
  findConfigFile,
  policiesOf,
  resolveConfig,
  resultFormatOf,
  retentionOf,
  scanModeOf,
  spillBytesOf,
  stateKeyOf,
  tracingOf,
  type DispatchFiles,
  type PolicyConfig,
  type ResultFormat,
  type Retention,
  type ScanMode,
  type TracingSettings,
} from "@codemux/server";
import { dirname } from "node:path";
import { jobsSettingsOf } from "./jobs-settings";

/** The top-level keys of a config file codemux reads (the servers' and its own sections), where a near miss is named. */
export const CONFIG_KEYS = [
  "mcpServers",
  "servers",
  "oauth",
  "inputs",
  "$schema",
  "plugins",
  "policies",
  "retention",
  "security",
  "spillBytes",
  "resultFormat",
  "stateKey",
  "dispatch",
  "http",
  "jobs",
  "store",
  "tracing",
] as const;

/**
 * What one start of codemux serves, read from its config file once and checked as a whole: the servers
 * (the file's and those given inline; undefined for the built-in default, which the caller makes) and
 * every section, each parsed by its owner. A mistake is a ConfigError naming the file and the field.
 */
export interface CodemuxConfig {
  /** The config file found (`--config`, CODEMUX_CONFIG, ./codemux.json, the home one); undefined without one. */
  file?: string;
  /** The file as parsed JSON: the plugins read their own sections from it (and again at each reload). */
  raw?: Record<string, unknown>;
  /** The servers of the file and the command line; undefined when neither names any (the built-in default). */
  servers?: PoolConfig;
  scan: ScanMode;
  policies?: PolicyConfig;
  retention?: Retention;
  resultFormat?: ResultFormat;
  dispatchFiles?: DispatchFiles;
  /** The file's `tracing` (OTLP traces without the OTEL_* variables). */
  tracing?: TracingSettings;
  /** The sections only a serving codemux reads: checked only when serving, so a one-shot command is not stopped by them. */
  serving?: { http: HttpSettings; jobs: { maxRunMs?: number }; spillBytes?: number; stateKey?: string };
  /** Softer mistakes: the servers' unknown keys, and top-level keys that look like a misspelled one of codemux's. */
  warnings: string[];
}

export interface LoadConfigOptions {
  /** `--config FILE`. */
  configPath?: string | undefined;
  /** Servers given after the first `--`. */
  inline?: string[];
  /** Check the sections only a serving codemux reads (`http`, `jobs`, `spillBytes`, `stateKey`). */
  serving?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** Finds the config file, reads it once, and parses the servers and every section of it. */
export async function loadCodemuxConfig(options: LoadConfigOptions = {}): Promise<CodemuxConfig> {
  const env = options.env ?? process.env;
  const file = findConfigFile({ ...(options.configPath ? { configPath: options.configPath } : {}), env })?.file;
  const text = file === undefined ? undefined : await readConfigText(file);
  const inline = options.inline ?? [];
  // Without a file or inline servers the built-in default serves: the caller makes it (it depends on how it serves).
  const servers =
    file !== undefined || inline.length > 0
      ? await resolveConfig({
          inline,
          env,
          ...(file !== undefined && text !== undefined ? { loaded: { file, text } } : {}),
          fallback: () => ({ source: "none", servers: [] }),
        })
      : undefined;
  if (file === undefined || text === undefined) return { ...(servers ? { servers } : {}), scan: "quarantine", warnings: [...(servers?.warnings ?? [])] };
  const raw = parseJsonc(text, file).value as Record<string, unknown>;
  const retention = retentionOf(raw, file);
  const resultFormat = resultFormatOf(raw, file);
  const dispatchFiles = dispatchFilesOf(raw, file, dirname(file));
  const policies = policiesOf(raw, file);
  const tracing = tracingOf(raw, file);
  const spillBytes = options.serving ? spillBytesOf(raw, file) : undefined;
  const stateKey = options.serving ? stateKeyOf(raw, file, env) : undefined;
  return {
    file,
    raw,
    ...(servers ? { servers } : {}),
    scan: scanModeOf(raw, file),
    ...(policies ? { policies } : {}),
    ...(retention ? { retention } : {}),
    ...(resultFormat ? { resultFormat } : {}),
    ...(dispatchFiles ? { dispatchFiles } : {}),
    ...(tracing ? { tracing } : {}),
    ...(options.serving
      ? {
          serving: {
            http: parseHttpSettings(raw, file),
            jobs: jobsSettingsOf(raw, file),
            ...(spillBytes !== undefined ? { spillBytes } : {}),
            ...(stateKey !== undefined ? { stateKey } : {}),
          },
        }
      : {}),
    warnings: [...(servers?.warnings ?? []), ...misspelledKeys(raw, file)],
  };
}

/**
 * The top-level keys that look like a misspelling of one codemux reads (`polices`): each is ignored, and said.
 * Other unknown keys pass quietly, since a client's own file (which codemux may serve) holds settings of its own.
 */
export function misspelledKeys(raw: unknown, file: string): string[] {
  if (!isSettingsObject(raw) || !("mcpServers" in raw || "servers" in raw)) return [];
  const known: readonly string[] = CONFIG_KEYS;
  return Object.keys(raw).flatMap((key) => {
    if (known.includes(key)) return [];
    const close = closestNames(key.slice(0, 60), known, 1)[0];
    return close ? [`${file}: unknown key "${key.slice(0, 60)}" is ignored (did you mean "${close}"?).`] : [];
  });
}
