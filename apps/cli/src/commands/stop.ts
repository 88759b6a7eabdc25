import type { Command } from "commander";
import { rmSync } from "node:fs";
import type { RunContext } from "../context";
import { UsageError } from "../errors";
import { isAlive, readDaemon, sleep, type DaemonInfo } from "./daemon";
import { daemonPidfiles, noDaemon } from "./status";

/** SIGTERM lets calls in flight finish; past this, SIGKILL. */
const STOP_WAIT_MS = 15_000;

/** Stops one background server: SIGTERM, a bounded wait, then SIGKILL; removes its pidfile. */
export async function stopDaemon(pidfile: string): Promise<DaemonInfo | undefined> {
  const info = readDaemon(pidfile);
  if (!info || !isAlive(info.pid)) {
    rmSync(pidfile, { force: true });
    return undefined;
  }
  process.kill(info.pid, "SIGTERM");
  const deadline = Date.now() + STOP_WAIT_MS;
  while (isAlive(info.pid) && Date.now() < deadline) await sleep(100);
  if (isAlive(info.pid)) {
    process.kill(info.pid, "SIGKILL");
    for (let i = 0; i < 50 && isAlive(info.pid); i++) await sleep(100);
    if (isAlive(info.pid)) throw new UsageError(`pid ${info.pid} did not stop, even after SIGKILL; check it with ps.`, 1);
  }
  rmSync(pidfile, { force: true });
  return info;
}

/** `codemux stop`: stops the background server of this config (or the only one running). */
export function registerStop(program: Command, context: RunContext): void {
  program
    .command("stop")
    .description("stop the background HTTP server (SIGTERM: calls in flight finish; SIGKILL after 15 s)")
    .action(async (_options: unknown, command: Command) => {
      const pidfiles = daemonPidfiles(command).filter((p) => readDaemon(p) !== undefined);
      if (pidfiles.length > 1) throw new UsageError(`${pidfiles.length} background servers run; name one with --config FILE (codemux status lists them).`);
      const stopped = pidfiles[0] ? await stopDaemon(pidfiles[0]) : undefined;
      if (!stopped) throw noDaemon();
      context.stdout.write(`stopped codemux at ${stopped.url} (pid ${stopped.pid})\n`);
    });
}
