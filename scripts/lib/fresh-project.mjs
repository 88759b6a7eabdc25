// A fresh npm project in a temporary folder, as on a machine with only Node and npm.
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Flags that keep installs quick and quiet in CI: the npm cache first, no audit, no funding notes. */
export const NPM_INSTALL_FLAGS = ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"];

/** Makes `dir` an empty ESM project and installs `specs` (tarball paths or registry names) into it. */
export async function freshProject(dir, specs) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "fresh-project", private: true, type: "module" }, null, 2)}\n`);
  try {
    await run("npm", [...NPM_INSTALL_FLAGS, ...specs], { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    throw new Error(`npm install in ${dir} failed: ${error.stderr || error.message}`);
  }
  return dir;
}

/** Runs a command; resolves with its exit code and output, never rejects for a non-zero exit. */
export async function runCommand(command, args, { cwd, env = process.env, timeoutMs = 120_000 } = {}) {
  try {
    const { stdout, stderr } = await run(command, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    return { code: typeof error.code === "number" ? error.code : 1, stdout: error.stdout ?? "", stderr: `${error.stderr ?? ""}${error.message}` };
  }
}
