import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { codemuxHome } from "@codemux/server";
import { DaemonRunningError } from "../errors";

const execFileAsync = promisify(execFile);

/** What a running `codemux serve --http --detach` writes about itself (mode 0600). It holds no secret. */
export interface DaemonInfo {
  pid: number;
  url: string;
  configPath: string | null;
  logFile: string | null;
  startedAt: string;
  version: string;
  /** How it was started, so `restart` starts it the same way; never a token (tokens reach a daemon in its environment). */
  argv: string[];
  cwd: string;
  /** `CODEMUX_HOST` and `CODEMUX_PORT` as it was started with, so that `restart` listens at the same address from any shell. */
  listenEnv?: { CODEMUX_HOST?: string; CODEMUX_PORT?: string };
  /** The address it listens at, its port as bound: `restart` listens there again (a port that `:0` picked stays). */
  listen?: { host: string; port: number };
  /** Where its tokens came from, never the tokens: `restart` finds them there again, or refuses. */
  auth: TokenSources;
  /** Its start time and command line as the OS reports them, so a pid another process has taken is never signalled. */
  process: string | null;
}

/** Where a daemon's tokens came from. */
export interface TokenSources {
  /** How many `--token` flags were given; their values are kept nowhere, so `restart` cannot give them again. */
  flags: number;
  /** `--token-file`, as an absolute path. */
  tokenFile: string | null;
  /** The environment variable a token came from (`CODEMUX_TOKEN`). */
  env: string | null;
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

/**
 * A process's start time and command line: from /proc on Linux, from ps elsewhere on POSIX; undefined
 * when the process is gone or the OS cannot tell (Windows). Equal values mean the same process.
 */
export async function processIdentity(pid: number): Promise<string | undefined> {
  if (process.platform === "win32") return undefined;
  try {
    if (process.platform === "linux") {
      const [stat, cmdline] = await Promise.all([readFile(`/proc/${pid}/stat`, "utf8"), readFile(`/proc/${pid}/cmdline`, "utf8")]);
      // Field 22 of /proc/PID/stat is the start time in clock ticks after boot: the 20th after "pid (comm) ".
      const startTime = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
      return startTime ? `${startTime} ${cmdline.replaceAll("\0", " ").trim()}` : undefined;
    }
    const { stdout } = await execFileAsync("ps", ["-o", "lstart=", "-o", "command=", "-p", String(pid)], { timeout: 5_000 });
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the pid of a run file is still the codemux that wrote it: the same start time and command
 * line, or, where the OS cannot tell (or the run file predates that record), an answer on its address.
 */
export async function isDaemonProcess(info: DaemonInfo): Promise<boolean> {
  if (!isAlive(info.pid)) return false;
  const now = info.process ? await processIdentity(info.pid) : undefined;
  if (info.process && now) return now === info.process;
  return healthy(info.url);
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
 * Claims the pidfile exclusively (O_EXCL). A stale one (its process is gone, or its pid is another
 * process's now) is reclaimed; a live one means another server runs this config, and starting a second one is refused.
 */
export async function claimPidfile(pidfile: string, info: DaemonInfo): Promise<void> {
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
      if (existing && existing.pid !== process.pid && (await isDaemonProcess(existing))) throw new DaemonRunningError(existing);
      rmSync(pidfile, { force: true });
    }
  }
}

export function releasePidfile(pidfile: string): void {
  const existing = readDaemon(pidfile);
  if (!existing || existing.pid === process.pid) rmSync(pidfile, { force: true });
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
