import { createHash } from "node:crypto";
import { mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync, closeSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { codemuxHome } from "@codemux/server";

/** What a running `codemux serve --http --detach` writes about itself (mode 0600). */
export interface DaemonInfo {
  pid: number;
  url: string;
  configPath: string | null;
  logFile: string | null;
  startedAt: string;
  version: string;
  /** How it was started, so `restart` starts it the same way. */
  argv: string[];
  cwd: string;
}

export function runDir(home = codemuxHome()): string {
  return join(home, "run");
}

/** One daemon per config file: the pidfile is named after the config's path. */
export function pidfilePath(configPath: string | undefined, home = codemuxHome()): string {
  const key = configPath ? resolve(configPath) : "built-in default";
  return join(runDir(home), `serve-${createHash("sha256").update(key).digest("hex").slice(0, 12)}.json`);
}

export function logFilePath(pidfile: string, home = codemuxHome()): string {
  return join(home, "logs", basename(pidfile).replace(/\.json$/, ".log"));
}

export function readDaemon(pidfile: string): DaemonInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(pidfile, "utf8")) as DaemonInfo;
    return typeof info.pid === "number" && typeof info.url === "string" ? info : undefined;
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but someone else's.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Every daemon pidfile under codemux's home. */
export function allPidfiles(home = codemuxHome()): string[] {
  try {
    return readdirSync(runDir(home))
      .filter((f) => /^serve-[0-9a-f]{12}\.json$/.test(f))
      .map((f) => join(runDir(home), f));
  } catch {
    return [];
  }
}

/**
 * Claims the pidfile exclusively (O_EXCL). A stale one (its process is gone) is reclaimed; a live
 * one means another server runs this config, and starting a second one is refused.
 */
export function claimPidfile(pidfile: string, info: DaemonInfo): void {
  mkdirSync(dirname(pidfile), { recursive: true, mode: 0o700 });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(pidfile, "wx", 0o600);
      writeFileSync(fd, `${JSON.stringify(info, null, 2)}\n`);
      closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const existing = readDaemon(pidfile);
      if (existing && isAlive(existing.pid) && existing.pid !== process.pid) {
        throw new DaemonRunningError(existing);
      }
      rmSync(pidfile, { force: true });
    }
  }
}

export function releasePidfile(pidfile: string): void {
  const existing = readDaemon(pidfile);
  if (!existing || existing.pid === process.pid) rmSync(pidfile, { force: true });
}

export class DaemonRunningError extends Error {
  constructor(readonly info: DaemonInfo) {
    super(`codemux already serves this config at ${info.url} (pid ${info.pid}); stop it with \`codemux stop\`, or use \`codemux restart\`.`);
  }
}

/** `/healthz` answers within `timeoutMs`. */
export async function healthy(url: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok;
  } catch {
    return false;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
