import type { PoolConfig } from "@codemux/pool";
import { parseConfig } from "@codemux/pool";
import { codemuxHome } from "@codemux/server";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

/** The entry script of an installed server package, run with this Node (no npx, works offline). */
function serverScript(pkg: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = require(manifest) as { bin: Record<string, string> };
  return join(dirname(manifest), Object.values(bin)[0]!);
}

export interface DefaultConfigOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Served to several principals (over HTTP with more than one token, a token file, or OAuth): each gets its own memory. */
  manyPrincipals?: boolean;
}

/** Where each principal's own knowledge graph is kept when the built-in default serves several: `graphs/principals/<hash>/memory.jsonl`. */
export function graphsFolder(env: NodeJS.ProcessEnv = process.env): string {
  return join(codemuxHome(env), "graphs");
}

/**
 * With no config: a filesystem server on the current directory and a memory server, both installed with codemux.
 * Served to several principals, the memory server runs once per principal, each on a graph file of its own.
 */
export function defaultConfig({ cwd = process.cwd(), env = process.env, manyPrincipals = false }: DefaultConfigOptions = {}): PoolConfig {
  // The memory server writes its graph here and does not create the folder itself.
  mkdirSync(codemuxHome(env), { recursive: true });
  const config = parseConfig(
    JSON.stringify({
      mcpServers: {
        fs: { command: process.execPath, args: [serverScript("@modelcontextprotocol/server-filesystem"), cwd] },
        memory: {
          command: process.execPath,
          args: [serverScript("@modelcontextprotocol/server-memory")],
          env: { MEMORY_FILE_PATH: join(codemuxHome(env), "memory.jsonl") },
          ...(manyPrincipals ? { isolation: "principal" } : {}),
        },
      },
    }),
    { file: "built-in default", env: {} },
  );
  const servers = manyPrincipals
    ? config.servers.map((spec) =>
        spec.name === "memory" ? { ...spec, ownFolder: { env: "MEMORY_FILE_PATH", under: graphsFolder(env), file: "memory.jsonl" } } : spec,
      )
    : config.servers;
  return { ...config, servers, source: "built-in default" };
}
