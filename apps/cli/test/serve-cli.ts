import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";

/** The built CLI, as users run it. */
export const cli = resolve(import.meta.dirname, "../dist/index.js");

export interface CliRun {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** Runs one CLI command to its end. */
export function runCli(args: string[], { cwd, env }: CliRun): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("close", (code) => done({ code: code ?? -1, stdout, stderr }));
  });
}

/** Starts `codemux ARGS` (a `serve --http`) in the foreground, kept in `started`; resolves with its URL once it says it serves. */
export function serveCli(
  args: string[],
  { cwd, env, started }: CliRun & { started: ChildProcess[] },
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
