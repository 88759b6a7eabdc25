import type { Command } from "commander";
import { rmSync } from "node:fs";
import type { RunContext } from "../context";
import { UsageError } from "../errors";
import { isAlive, processIdentity, sleep, type DaemonInfo } from "./daemon";
import { CLOSE_MARGIN_MS, DRAIN_MS_DEFAULT } from "./serve";
import { daemonPidfiles, liveDaemon, noDaemon } from "./status";

/**
 * How long `stop` waits after SIGTERM before SIGKILL: the server's own drain (its `--drain-ms`, from how it was
 * started) and the margin it exits within, plus a few seconds, so a drain is never cut short.
 */
export function stopWaitMs(argv: readonly string[]): number {
  const at = argv.findIndex((a) => a === "--drain-ms" || a.startsWith("--drain-ms="));
  const given = at < 0 ? undefined : argv[at]?.includes("=") ? argv[at]?.slice("--drain-ms=".length) : argv[at + 1];
  const ms = Number(given);
  return (Number.isInteger(ms) && ms > 0 ? ms : DRAIN_MS_DEFAULT) + CLOSE_MARGIN_MS + 5_000;
}

/**
 * Stops one background server: SIGTERM, a bounded wait, then SIGKILL; removes its pidfile. Only a
 * process proven to be that server is signalled (see isDaemonProcess): a stale pidfile's pid may be another process's now.
 */
export async function stopDaemon(pidfile: string): Promise<DaemonInfo | undefined> {
  const info = await liveDaemon(pidfile);
  if (!info) return undefined;
  process.kill(info.pid, "SIGTERM");
  // Gone, or (past its exit) a pid some other process was given meanwhile.
  const stillThere = async () => isAlive(info.pid) && (info.process ? (await processIdentity(info.pid)) === info.process : true);
  const deadline = Date.now() + stopWaitMs(info.argv);
  while ((await stillThere()) && Date.now() < deadline) await sleep(100);
  if (await stillThere()) {
    process.kill(info.pid, "SIGKILL");
    for (let i = 0; i < 50 && (await stillThere()); i++) await sleep(100);
    if (await stillThere()) throw new UsageError(`pid ${info.pid} did not stop, even after SIGKILL; check it with ps.`, 1);
  }
  rmSync(pidfile, { force: true });
  return info;
}

/** `codemux stop`: stops the background server of this config (or the only one running). */
export function registerStop(program: Command, context: RunContext): void {
  program
    .command("stop")
    .description(
      "stop the background HTTP server (SIGTERM: it drains, calls in flight finish within its --drain-ms; SIGKILL 15 s past that); a stale pidfile's pid is never signalled",
    )
    .action(async (_options: unknown, command: Command) => {
      const pidfiles = await livePidfiles(command);
      if (pidfiles.length > 1) throw new UsageError(`${pidfiles.length} background servers run; name one with --config FILE (codemux status lists them).`);
      const stopped = pidfiles[0] ? await stopDaemon(pidfiles[0]) : undefined;
      if (!stopped) throw noDaemon();
      context.stdout.write(`stopped codemux at ${stopped.url} (pid ${stopped.pid})\n`);
    });
}

/** The pidfiles of the daemons that run (stale ones are removed on the way). */
export async function livePidfiles(command: Command): Promise<string[]> {
  const live = await Promise.all(daemonPidfiles(command).map(async (pidfile) => ((await liveDaemon(pidfile)) ? pidfile : undefined)));
  return live.filter((pidfile): pidfile is string => pidfile !== undefined);
}
