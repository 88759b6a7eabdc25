import { spawn, type ChildProcess } from "node:child_process";
import { cli } from "./run-cli";

/** Starts `codemux ARGS` (a `serve --http`) in the foreground, kept in `started`; resolves with its URL once it says it serves. */
export function serveCli(
  args: string[],
  { cwd, env, started }: { cwd: string; env: NodeJS.ProcessEnv; started: ChildProcess[] },
): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  started.push(child);
  let stderr = "";
  return new Promise((done, fail) => {
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d;
      const url = /serving (http:\/\/[^ ]+)\/mcp/.exec(stderr)?.[1];
      if (url) done({ child, url, stderr: () => stderr });
    });
    child.on("exit", (code) => fail(new Error(`serve exited ${code}: ${stderr}`)));
  });
}

/**
 * Signals every child still running and resolves once all have exited (SIGKILL after `graceMs`): a codemux
 * drains and writes its catalog cache as it stops, so its folder is removed after this, never while it writes.
 */
export async function stopAll(children: readonly ChildProcess[], signal: NodeJS.Signals = "SIGTERM", graceMs = 10_000): Promise<void> {
  await Promise.all(
    children.map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      return new Promise<void>((exited) => {
        const kill = setTimeout(() => child.kill("SIGKILL"), graceMs);
        child.once("exit", () => {
          clearTimeout(kill);
          exited();
        });
        child.kill(signal);
      });
    }),
  );
}
