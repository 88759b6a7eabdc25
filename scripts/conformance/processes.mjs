// The two processes a conformance run needs: the vendored everything-server (the one downstream)
// and codemux serving HTTP in front of it. Each resolves once it printed the line that says it is ready.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "../lib/workspace.mjs";

export const FIXTURE_PATH = join(root, "packages", "test-servers", "dist", "conformance-everything-server.js");
export const CLI_PATH = join(root, "apps", "cli", "dist", "index.js");
/** The downstream's name in codemux, hence the prefix of its tools and prompts. */
export const SERVER_NAME = "everything";
const START_TIMEOUT_MS = 60_000;

/** Starts `args` under this Node and resolves with the child and the first match of `pattern` in its output. */
export function startUntil({ args, env, pattern, what }) {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    const fail = (why) => {
      child.kill();
      reject(new Error(`${what} did not start (${why}). Its output:\n${output.slice(-4000)}`));
    };
    const timer = setTimeout(() => fail(`no ready line within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    const onData = (chunk) => {
      // Keep only the tail: a chatty child never grows this without bound.
      output = (output + chunk).slice(-64 * 1024);
      const match = output.match(pattern);
      if (!match) return;
      clearTimeout(timer);
      child.off("exit", onExit);
      resolve({ child, match, output: () => output });
    };
    child.stdout.setEncoding("utf8").on("data", onData);
    child.stderr.setEncoding("utf8").on("data", onData);
    const onExit = (code) => {
      clearTimeout(timer);
      fail(`it exited with code ${code}`);
    };
    child.on("exit", onExit);
  });
}

/** Starts the everything-server on a free loopback port; resolves with the child and its MCP URL. */
export async function startFixture() {
  const { child, match } = await startUntil({
    args: [FIXTURE_PATH],
    env: { PORT: "0" },
    pattern: /MCP endpoint: (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
    what: "The conformance everything-server",
  });
  return { child, url: match[1] };
}

/** Starts codemux over HTTP (passthrough mode) with the fixture as its one downstream; resolves once the downstream is ready. */
export async function startCodemux({ fixtureUrl, dir }) {
  const config = join(dir, "codemux.json");
  // Unpinned (`protocol: auto`): codemux probes the fixture's era as it would any server's.
  writeFileSync(config, JSON.stringify({ mcpServers: { [SERVER_NAME]: { type: "http", url: fixtureUrl } } }));
  const { child, output } = await startUntil({
    args: [CLI_PATH, "serve", "--http", "127.0.0.1:0", "--config", config, "--mode", "passthrough", "--no-watch"],
    env: { CODEMUX_HOME: join(dir, "home") },
    pattern: new RegExp(`\\[${SERVER_NAME}\\] ready`),
    what: "codemux",
  });
  const url = output().match(/serving (http:\/\/127\.0\.0\.1:\d+)\/mcp/)?.[1];
  if (!url) throw new Error(`codemux did not say where it serves. Its output:\n${output()}`);
  return { child, url };
}
