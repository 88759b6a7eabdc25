import { findConfigFile } from "@codemux/server";
import type { Command } from "commander";
import { rmSync } from "node:fs";
import type { GlobalOptions, RunContext } from "../context";
import { UsageError } from "../errors";
import { allPidfiles, healthy, isDaemonProcess, pidfilePath, readDaemon, type DaemonInfo, type TokenSources } from "./daemon";

/** Exit codes of `codemux status`: 0 running and answering, 3 not running, 5 running but not answering. */
export const STATUS_EXIT = { running: 0, notRunning: 3, unreachable: 5 } as const;

/** The daemons `--config` names (one), or every daemon under codemux's home. */
export function daemonPidfiles(command: Command): string[] {
  const { config } = command.optsWithGlobals<GlobalOptions>();
  const found = findConfigFile(config ? { configPath: config } : {});
  // Only a config named (--config, $CODEMUX_CONFIG) picks one daemon; one found by the lookup may not be the one running.
  return found && (found.step === "--config" || found.step === "CODEMUX_CONFIG") ? [pidfilePath(found.file)] : allPidfiles();
}

/** The run file of a daemon that is still there; a stale one (its process gone, or its pid another process's now) is removed. */
export async function liveDaemon(pidfile: string): Promise<DaemonInfo | undefined> {
  const info = readDaemon(pidfile);
  if (info && (await isDaemonProcess(info))) return info;
  rmSync(pidfile, { force: true });
  return undefined;
}

/** `codemux status`: is a background server running, where, and does it answer. */
export function registerStatus(program: Command, context: RunContext): void {
  program
    .command("status")
    .description("show the background HTTP server (codemux serve --http --detach): URL, pid, health; exit 0 running, 3 not running, 5 not answering")
    .option("--json", "machine-readable output (no token: the run file keeps none)")
    .action(async (options: { json?: boolean }, command: Command) => {
      const found: Array<Omit<DaemonInfo, "argv" | "process"> & { state: "running" | "unreachable" }> = [];
      for (const pidfile of daemonPidfiles(command)) {
        const info = await liveDaemon(pidfile);
        if (!info) continue;
        const { pid, url, configPath, logFile, startedAt, version, cwd, auth } = info;
        found.push({ pid, url, configPath, logFile, startedAt, version, cwd, auth, state: (await healthy(url)) ? "running" : "unreachable" });
      }
      if (options.json) context.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
      else if (found.length === 0) context.stdout.write("codemux is not running in the background (start it with codemux serve --http --detach).\n");
      else {
        for (const d of found) {
          context.stdout.write(
            [
              `${d.state === "running" ? "running" : "NOT ANSWERING"}  ${d.url}/mcp  pid ${d.pid}  since ${d.startedAt}`,
              `  config ${d.configPath ?? "(built-in default or inline)"}  log ${d.logFile ?? "-"}`,
              `  tokens ${describeSources(d.auth)}`,
              `  client config: { "type": "http", "url": "${d.url}/mcp", "headers": { "Authorization": "Bearer <token>" } }`,
            ].join("\n") + "\n",
          );
        }
      }
      context.exitCode =
        found.length === 0 ? STATUS_EXIT.notRunning : found.every((d) => d.state === "running") ? STATUS_EXIT.running : STATUS_EXIT.unreachable;
    });
}

/** "from $CODEMUX_TOKEN and /etc/codemux/tokens.txt": where the tokens are, never what they are. */
function describeSources(auth: TokenSources | undefined): string {
  if (!auth) return "(not recorded)";
  const parts = [
    auth.env ? `from $${auth.env}` : undefined,
    auth.tokenFile ? `from ${auth.tokenFile}` : undefined,
    auth.flags ? `${auth.flags} given with --token (kept nowhere)` : undefined,
  ].filter(Boolean);
  return parts.length ? parts.join(", ") : "none (no auth)";
}

export function noDaemon(): UsageError {
  return new UsageError("codemux is not running in the background for this config (codemux status lists what runs).", STATUS_EXIT.notRunning);
}
