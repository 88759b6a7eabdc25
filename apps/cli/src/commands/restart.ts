import type { Command } from "commander";
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import type { RunContext } from "../context";
import { UsageError } from "../errors";
import { readDaemon, type DaemonInfo } from "./daemon";
import { noDaemon } from "./status";
import { livePidfiles, stopDaemon } from "./stop";

/** `codemux restart`: stops the background server and starts it again the way it was started, with the same auth. */
export function registerRestart(program: Command, context: RunContext): void {
  program
    .command("restart")
    .description("restart the background HTTP server with the arguments and token sources it was started with (or refuse, and leave it running)")
    .action(async (_options: unknown, command: Command) => {
      const pidfiles = await livePidfiles(command);
      if (pidfiles.length > 1) throw new UsageError(`${pidfiles.length} background servers run; name one with --config FILE (codemux status lists them).`);
      const pidfile = pidfiles[0];
      const info = pidfile ? readDaemon(pidfile) : undefined;
      if (!pidfile || !info) throw noDaemon();
      const [script, ...args] = info.argv;
      if (!script) throw new UsageError("the pidfile does not say how the server was started; start it again with codemux serve --http --detach.", 1);
      // Checked before stopping: a refusal leaves the server running as it was.
      const env = restartEnvironment(info);
      await stopDaemon(pidfile);
      const dash = args.indexOf("--");
      // The address it had, as bound: a port `:0` picked stays; the last --http given wins.
      const listen = info.listen ? ["--http", `${info.listen.host.includes(":") ? `[${info.listen.host}]` : info.listen.host}:${info.listen.port}`] : [];
      const again = dash === -1 ? [...args, ...listen, "--detach"] : [...args.slice(0, dash), ...listen, "--detach", ...args.slice(dash)];
      const child = spawn(process.execPath, [script, ...again], { cwd: info.cwd, stdio: ["ignore", "inherit", "inherit"], env });
      const code = await new Promise<number>((resolve) => child.once("exit", (c) => resolve(c ?? 1)));
      if (code !== 0) throw new UsageError(`codemux stopped but did not start again (exit ${code}); see ${info.logFile ?? "its log"}.`, 1);
      context.stdout.write(`restarted codemux (was pid ${info.pid})\n`);
    });
}

/**
 * The environment that starts the server with the auth it had: its token sources must be there again
 * (never served without auth silently), and a token it did not have is not added from this shell.
 */
function restartEnvironment(info: DaemonInfo): NodeJS.ProcessEnv {
  const refuse = (why: string) =>
    new UsageError(`not restarting the background server (pid ${info.pid}, still running): ${why}; or stop it (codemux stop) and start it again.`, 1);
  const auth = info.auth;
  if (!auth) throw refuse("its run file does not say where its tokens came from (an older codemux wrote it)");
  if (auth.flags > 0)
    throw refuse(
      `it was started with ${auth.flags === 1 ? "a token" : `${auth.flags} tokens`} given as --token, which codemux keeps nowhere; start it with --token-file FILE or CODEMUX_TOKEN so that restart can find the token again`,
    );
  if (auth.tokenFile) {
    try {
      accessSync(auth.tokenFile, constants.R_OK);
    } catch {
      throw refuse(`its token file ${auth.tokenFile} cannot be read now; put it back`);
    }
  }
  const env = { ...process.env };
  if (auth.env && !env[auth.env]?.trim())
    throw refuse(`it was started with its token in $${auth.env}, which this shell does not set; set it and run codemux restart again`);
  if (!auth.env) delete env.CODEMUX_TOKEN;
  // The address it listened at, whatever this shell sets.
  delete env.CODEMUX_HOST;
  delete env.CODEMUX_PORT;
  return { ...env, ...info.listenEnv };
}
