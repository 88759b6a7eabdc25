import { spawn } from "node:child_process";
import { resolve } from "node:path";

/** The built CLI the tests run. */
export const cli = resolve(import.meta.dirname, "../dist/index.js");

export interface CliRun {
  /** null when a signal ended it. */
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed (left open with `signalAfter`). */
  input?: string;
  /** Keeps stdin open and sends SIGINT a moment after stderr shows this text. */
  signalAfter?: string;
}

/** Runs the built CLI to its end and collects what it printed. */
export function runCli(args: string[], options: CliOptions): Promise<CliRun> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: options.cwd, env: options.env });
    let stdout = "";
    let stderr = "";
    let signalled = false;
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => {
      stderr += d;
      if (options.signalAfter && !signalled && stderr.includes(options.signalAfter)) {
        signalled = true;
        // A moment for a call to reach its server; what the test expects must hold either way.
        setTimeout(() => child.kill("SIGINT"), 300);
      }
    });
    child.on("close", (code) => done({ code, stdout, stderr }));
    if (options.signalAfter === undefined) child.stdin.end(options.input ?? "");
    else if (options.input) child.stdin.write(options.input);
  });
}
