import { ConfigError } from "../errors";
import { parseConfig } from "./load";
import type { PoolConfig } from "./types";

/**
 * Parses servers given on the command line, separated by `--`:
 *   `-- NAME [--transport stdio] [--env K=V]... [--cwd DIR] -- CMD ARGS...` for stdio (seed 001's and seed 002's forms),
 *   `-- NAME --transport http|sse URL [-H "K: V"]...` for HTTP.
 * The result goes through the same validation as a config file.
 */
export function parseInlineServers(argv: string[], env: NodeJS.ProcessEnv = process.env): PoolConfig {
  const groups: string[][] = [[]];
  for (const arg of argv) {
    if (arg === "--") groups.push([]);
    else groups[groups.length - 1]!.push(arg);
  }
  const parts = groups.filter((g, i) => i > 0 || g.length > 0);
  const servers: Record<string, unknown> = {};
  let i = 0;
  while (i < parts.length) {
    const [name, ...options] = parts[i] as string[];
    if (!name) throw new ConfigError('Inline servers: expected a server name after "--".');
    const flags = serverFlags(name, options);
    if (flags.transport === "http" || flags.transport === "sse") {
      if (!flags.url) throw new ConfigError(`Inline server "${name}": --transport ${flags.transport} needs a URL.`);
      servers[name] = { type: flags.transport, url: flags.url, headers: flags.headers };
      i += 1;
    } else {
      if (flags.url)
        throw new ConfigError(
          `Inline server "${name}": unexpected "${flags.url}"; expected "-- ${name} -- COMMAND ARGS..." or "-- ${name} --transport http URL".`,
        );
      const command = parts[i + 1];
      if (!command || command.length === 0) throw new ConfigError(`Inline server "${name}": expected "-- COMMAND ARGS..." after its name.`);
      servers[name] = {
        command: command[0],
        args: command.slice(1),
        ...(Object.keys(flags.env).length ? { env: flags.env } : {}),
        ...(flags.cwd ? { cwd: flags.cwd } : {}),
      };
      i += 2;
    }
  }
  const config = parseConfig(JSON.stringify({ mcpServers: servers }), { file: "(command line)", env });
  return { ...config, source: "inline" };
}

interface ServerFlags {
  transport: "stdio" | "http" | "sse";
  url: string | undefined;
  headers: Record<string, string>;
  env: Record<string, string>;
  cwd: string | undefined;
}

/** The flags between a server's name and its command: --transport, a URL with -H headers, --env K=V, --cwd DIR. */
function serverFlags(server: string, args: string[]): ServerFlags {
  const flags: ServerFlags = { transport: "stdio", url: undefined, headers: {}, env: {}, cwd: undefined };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const value = () => {
      const next = args[++i];
      if (next === undefined) throw new ConfigError(`Inline server "${server}": ${arg} needs a value.`);
      return next;
    };
    if (arg === "--transport") {
      const type = value();
      if (type !== "stdio" && type !== "http" && type !== "sse")
        throw new ConfigError(`Inline server "${server}": --transport takes "stdio", "http" or "sse", not "${type}".`);
      flags.transport = type;
    } else if (arg === "-H" || arg === "--header") {
      const header = value();
      const colon = header.indexOf(":");
      if (colon <= 0) throw new ConfigError(`Inline server "${server}": header "${header}" must look like "Name: value".`);
      flags.headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
    } else if (arg === "--env" || arg === "-e") {
      const pair = value();
      const eq = pair.indexOf("=");
      if (eq <= 0) throw new ConfigError(`Inline server "${server}": --env "${pair}" must look like NAME=value.`);
      flags.env[pair.slice(0, eq)] = pair.slice(eq + 1);
    } else if (arg === "--cwd") {
      flags.cwd = value();
    } else if (flags.url === undefined && !arg.startsWith("-")) {
      flags.url = arg;
    } else {
      throw new ConfigError(`Inline server "${server}": unexpected "${arg}" (headers are given as -H "Name: value").`);
    }
  }
  if (flags.transport === "stdio" && Object.keys(flags.headers).length > 0)
    throw new ConfigError(`Inline server "${server}": -H headers need --transport http or sse.`);
  return flags;
}
