import { ConfigError, loadConfigFile, parseInlineServers, type PoolConfig } from "@codemux/pool";
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

/**
 * Where the config comes from: `--config`, `$CODEMUX_CONFIG`, `./codemux.json`, else the built-in
 * default; servers given inline are added to a config file's (a name in both is an error), or
 * served alone when there is no file.
 */
export async function resolveConfig(options: ResolveConfigOptions): Promise<PoolConfig> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const inline = options.inline && options.inline.length > 0 ? parseInlineServers(options.inline, env) : undefined;
  const explicit = options.configPath ?? env.CODEMUX_CONFIG;
  const local = resolve(cwd, "codemux.json");
  const file = explicit ? await loadConfigFile(resolve(cwd, explicit), env) : existsSync(local) ? await loadConfigFile(local, env) : undefined;
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
