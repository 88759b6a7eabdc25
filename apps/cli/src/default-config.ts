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

/** With no config: a filesystem server on the current directory and a memory server, both installed with codemux. */
export function defaultConfig(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): PoolConfig {
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
        },
      },
    }),
    { file: "built-in default", env: {} },
  );
  return { ...config, source: "built-in default" };
}
