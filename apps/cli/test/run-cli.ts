import { spawn } from "node:child_process";
import { resolve } from "node:path";

/** The built CLI the tests run. */
export const cli = resolve(import.meta.dirname, "../dist/index.js");

/** Runs the built CLI to its end with stdin closed (after `input`, when given): its exit code and output. */
export function runCli(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; input?: string },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: options.cwd, env: options.env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("close", (code) => done({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}
