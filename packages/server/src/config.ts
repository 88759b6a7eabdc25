import { loadConfigFile, parseInlineServers, type PoolConfig } from "@codemux/pool";
import { existsSync } from "node:fs";
import { resolve } from "node:path";

export interface ResolveConfigOptions {
  /** `--config FILE` */
  configPath?: string;
  /** Servers given on the command line after `--`. */
  inline?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** The built-in default, used when nothing else is configured. */
  fallback: () => PoolConfig;
}

/** Where the config comes from: inline servers, `--config`, `$CODEMUX_CONFIG`, `./codemux.json`, else the built-in default. */
export async function resolveConfig(options: ResolveConfigOptions): Promise<PoolConfig> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  if (options.inline && options.inline.length > 0) return parseInlineServers(options.inline, env);
  const explicit = options.configPath ?? env.CODEMUX_CONFIG;
  if (explicit) return loadConfigFile(resolve(cwd, explicit), env);
  const local = resolve(cwd, "codemux.json");
  if (existsSync(local)) return loadConfigFile(local, env);
  return options.fallback();
}
