import { ConfigError } from "../errors";
import { parseConfig } from "./load";
import type { PoolConfig } from "./types";

/**
 * Parses servers given on the command line, separated by `--`:
 *   `-- NAME -- CMD ARGS...` for stdio, `-- NAME --transport http|sse URL [-H "K: V"]...` for HTTP.
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
    const head = parts[i]!;
    const name = head[0];
    if (!name) throw new ConfigError("Inline servers: expected a server name after \"--\".");
    if (head.length > 1 && head[1] === "--transport") {
      const [, , type, url, ...rest] = head;
      if (type !== "http" && type !== "sse") throw new ConfigError(`Inline server "${name}": --transport takes "http" or "sse", not "${type ?? ""}".`);
      if (!url) throw new ConfigError(`Inline server "${name}": --transport ${type} needs a URL.`);
      servers[name] = { type, url, headers: parseHeaders(name, rest) };
      i += 1;
    } else if (head.length > 1) {
      throw new ConfigError(`Inline server "${name}": expected "-- ${name} -- COMMAND ARGS..." or "-- ${name} --transport http URL".`);
    } else {
      const command = parts[i + 1];
      if (!command || command.length === 0) throw new ConfigError(`Inline server "${name}": expected "-- COMMAND ARGS..." after its name.`);
      servers[name] = { command: command[0], args: command.slice(1) };
      i += 2;
    }
  }
  const config = parseConfig(JSON.stringify({ mcpServers: servers }), { file: "(command line)", env });
  return { ...config, source: "inline" };
}

function parseHeaders(server: string, args: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    if (args[i] !== "-H" && args[i] !== "--header") throw new ConfigError(`Inline server "${server}": unexpected "${args[i]}" (headers are given as -H "Name: value").`);
    const header = args[++i] ?? "";
    const colon = header.indexOf(":");
    if (colon <= 0) throw new ConfigError(`Inline server "${server}": header "${header}" must look like "Name: value".`);
    headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  return headers;
}
