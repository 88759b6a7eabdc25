import { fileURLToPath } from "node:url";

/** This CLI's own script: `apps/cli/dist/index.js` of a checkout, or `dist/index.js` of an installed package. */
export function cliScript(): string {
  return fileURLToPath(import.meta.url);
}

/**
 * How an MCP client starts codemux with these options: `node <this CLI>` by default (what works before
 * codemux is on the npm registry: this copy, a checkout or an installed package, where it is), or
 * `npx -y codemux` when `npx` asks for the registry form.
 */
export function launchCommand(options: string[], { npx = false }: { npx?: boolean } = {}): { command: string; args: string[] } {
  return npx ? { command: "npx", args: ["-y", "codemux", ...options] } : { command: process.execPath, args: [cliScript(), ...options] };
}

/** Says which form `launchCommand` gave, and what it needs to keep working. */
export function launchForm({ npx = false }: { npx?: boolean } = {}): string {
  if (npx) return "npx -y codemux, from the npm registry, which serves codemux once it is released";
  // npx keeps what it runs in a cache of its own, which npm may clear.
  const cached = /[\\/]_npx[\\/]/.test(cliScript()) ? "; it is in npx's cache, which npm may clear: npm install -g codemux keeps a copy" : "";
  return `this copy of codemux by its path, which must stay where it is${cached}; --npx writes npx -y codemux instead`;
}
