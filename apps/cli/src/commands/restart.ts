import type { Command } from "commander";
import { spawn } from "node:child_process";
import type { RunContext } from "../context";
import { UsageError } from "../errors";
import { readDaemon } from "./daemon";
import { daemonPidfiles, noDaemon } from "./status";
import { stopDaemon } from "./stop";

/** `codemux restart`: stops the background server and starts it again the way it was started. */
export function registerRestart(program: Command, context: RunContext): void {
  program
    .command("restart")
    .description("restart the background HTTP server with the arguments it was started with")
    .action(async (_options: unknown, command: Command) => {
      const pidfiles = daemonPidfiles(command).filter((p) => readDaemon(p) !== undefined);
      if (pidfiles.length > 1) throw new UsageError(`${pidfiles.length} background servers run; name one with --config FILE (codemux status lists them).`);
      const pidfile = pidfiles[0];
      const info = pidfile ? readDaemon(pidfile) : undefined;
      if (!pidfile || !info) throw noDaemon();
      // Stop first; a failure to stop leaves nothing half-started.
      await stopDaemon(pidfile);
      const [script, ...args] = info.argv;
      if (!script) throw new UsageError("the pidfile does not say how the server was started; start it again with codemux serve --http --detach.", 1);
      const dash = args.indexOf("--");
      const again = dash === -1 ? [...args, "--detach"] : [...args.slice(0, dash), "--detach", ...args.slice(dash)];
      const child = spawn(process.execPath, [script, ...again], { cwd: info.cwd, stdio: ["ignore", "inherit", "inherit"], env: process.env });
      const code = await new Promise<number>((resolve) => child.once("exit", (c) => resolve(c ?? 1)));
      if (code !== 0) throw new UsageError(`codemux stopped but did not start again (exit ${code}); see ${info.logFile ?? "its log"}.`, 1);
      context.stdout.write(`restarted codemux (was pid ${info.pid})\n`);
    });
}
