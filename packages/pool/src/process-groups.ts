import { spawn, spawnSync, type ChildProcess } from "node:child_process";

/**
 * Every stdio server runs in its own process group (POSIX) so that its wrappers and children
 * (npx -> sh -> node) are ended with it. This registry ends the groups that are still alive when
 * codemux exits, however it exits.
 */
const groups = new Set<number>();
const SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
let installed = false;

export const usesProcessGroups = process.platform !== "win32";

export function trackGroup(pid: number): void {
  watchForExit();
  groups.add(pid);
}

export function untrackGroup(pid: number): void {
  groups.delete(pid);
}

/** True while any process of the group (or, on Windows, the process) is alive. */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(usesProcessGroups ? -pid : pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Signals the whole group; on Windows ends the process tree (taskkill /T). */
export function signalGroup(child: ChildProcess | number, signal: NodeJS.Signals): void {
  const pid = typeof child === "number" ? child : child.pid;
  if (pid === undefined) return;
  if (!usesProcessGroups) {
    if (signal === "SIGKILL") spawn("taskkill", ["/pid", String(pid), "/T", "/F"], { stdio: "ignore", windowsHide: true }).on("error", () => undefined);
    else if (typeof child !== "number") child.kill(signal);
    return;
  }
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** Ends every group still alive at once; the last resort when codemux exits. */
export function killAllGroupsNow(): void {
  for (const pid of groups) {
    if (usesProcessGroups) signalGroup(pid, "SIGKILL");
    else spawnSync("taskkill", ["/pid", String(pid), "/T", "/F"], { stdio: "ignore", windowsHide: true });
  }
  groups.clear();
}

/** Installs the exit and signal handlers that end the tracked groups (once). */
export function watchForExit(): void {
  if (installed) return;
  installed = true;
  // 'exit' cannot wait: whatever a graceful close left running is killed outright.
  process.on("exit", killAllGroupsNow);
  for (const signal of SIGNALS) {
    const handler = (): void => {
      // Someone else handles this signal (the CLI shuts down gracefully, then 'exit' cleans up).
      if (process.listenerCount(signal) > 1) return;
      for (const pid of groups) signalGroup(pid, "SIGTERM");
      const deadline = Date.now() + 1_000;
      const poll = setInterval(() => {
        if ([...groups].some(groupAlive) && Date.now() < deadline) return;
        clearInterval(poll);
        killAllGroupsNow();
        process.removeListener(signal, handler);
        // Die of the same signal, as the default handler would have.
        process.kill(process.pid, signal);
      }, 25);
    };
    process.on(signal, handler);
  }
}
