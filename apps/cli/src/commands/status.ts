import { findConfigFile } from "@codemux/server";
import type { Command } from "commander";
import { rmSync } from "node:fs";
import type { GlobalOptions, RunContext } from "../context";
import { UsageError } from "../errors";
import { allPidfiles, healthy, isAlive, pidfilePath, readDaemon, type DaemonInfo } from "./daemon";

/** Exit codes of `codemux status`: 0 running and answering, 3 not running, 5 running but not answering. */
export const STATUS_EXIT = { running: 0, notRunning: 3, unreachable: 5 } as const;

/** The daemons `--config` names (one), or every daemon under codemux's home. */
export function daemonPidfiles(command: Command): string[] {
  const { config } = command.optsWithGlobals<GlobalOptions>();
  const found = findConfigFile(config ? { configPath: config } : {});
  // Only a config named (--config, $CODEMUX_CONFIG) picks one daemon; one found by the lookup may not be the one running.
  return found && (found.step === "--config" || found.step === "CODEMUX_CONFIG") ? [pidfilePath(found.file)] : allPidfiles();
}

/** `codemux status`: is a background server running, where, and does it answer. */
export function registerStatus(program: Command, context: RunContext): void {
  program
    .command("status")
    .description("show the background HTTP server (codemux serve --http --detach): URL, pid, health; exit 0 running, 3 not running, 5 not answering")
    .option("--json", "machine-readable output")
    .action(async (options: { json?: boolean }, command: Command) => {
      const found: Array<DaemonInfo & { state: "running" | "unreachable" }> = [];
      for (const pidfile of daemonPidfiles(command)) {
        const info = readDaemon(pidfile);
        if (!info || !isAlive(info.pid)) {
          // A stale pidfile: the process is gone.
          rmSync(pidfile, { force: true });
          continue;
        }
        found.push({ ...info, state: (await healthy(info.url)) ? "running" : "unreachable" });
      }
      if (options.json) context.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
      else if (found.length === 0) context.stdout.write("codemux is not running in the background (start it with codemux serve --http --detach).\n");
      else {
        for (const d of found) {
          context.stdout.write(
            [
              `${d.state === "running" ? "running" : "NOT ANSWERING"}  ${d.url}/mcp  pid ${d.pid}  since ${d.startedAt}`,
              `  config ${d.configPath ?? "(built-in default or inline)"}  log ${d.logFile ?? "-"}`,
              `  client config: { "type": "http", "url": "${d.url}/mcp", "headers": { "Authorization": "Bearer <token>" } }`,
            ].join("\n") + "\n",
          );
        }
      }
      context.exitCode =
        found.length === 0 ? STATUS_EXIT.notRunning : found.every((d) => d.state === "running") ? STATUS_EXIT.running : STATUS_EXIT.unreachable;
    });
}

export function noDaemon(): UsageError {
  return new UsageError("codemux is not running in the background for this config (codemux status lists what runs).", STATUS_EXIT.notRunning);
}
