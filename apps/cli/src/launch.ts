import { fileURLToPath } from "node:url";

/** This CLI's own script: `apps/cli/dist/index.js` of a checkout, or `dist/index.js` of an installed package. */
export function cliScript(): string {
  return fileURLToPath(import.meta.url);
}

/** A checkout runs its CLI from its own folder; npm and npx install it under node_modules. */
export function runsFromCheckout(script = cliScript()): boolean {
  return !/[\\/]node_modules[\\/]/.test(script);
}

/**
 * How an MCP client starts codemux with these options: `node <this CLI>` (local: a checkout, or a copy
 * that stays where it is), else `npx -y codemux`, which needs codemux on the npm registry.
 */
export function launchCommand(options: string[], local: boolean): { command: string; args: string[] } {
  return local ? { command: process.execPath, args: [cliScript(), ...options] } : { command: "npx", args: ["-y", "codemux", ...options] };
}
