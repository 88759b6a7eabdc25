// The processes a conformance run needs: the vendored everything-server, and codemux serving HTTP
// in front of it and of the tasks fixture (the tools the referee's tasks-* scenarios call, which the
// everything-server lacks; codemux starts it over stdio). Each resolves once it printed the line that says it is ready.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "../lib/workspace.mjs";
import { namePrefixes, startNameShim } from "./name-shim.mjs";

export const FIXTURE_PATH = join(root, "packages", "test-servers", "dist", "conformance-everything-server.js");
export const CLI_PATH = join(root, "apps", "cli", "dist", "index.js");
export const TASKS_FIXTURE_PATH = join(root, "packages", "test-servers", "dist", "conformance-tasks-server.js");
/** The downstream's name in codemux, hence the prefix of its tools and prompts. */
export const SERVER_NAME = "everything";
/** The tasks fixture's name in codemux, and the tools it serves (the shim prefixes these with it). */
export const TASKS_SERVER_NAME = "tasks";
export const TASKS_TOOLS = ["greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input", "test_tool_with_task"];
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

/** Starts codemux over HTTP (passthrough mode) with the fixture and the tasks fixture as its downstreams; resolves once both are ready. */
export async function startCodemux({ fixtureUrl, dir }) {
  const config = join(dir, "codemux.json");
  // Unpinned (`protocol: auto`): codemux probes the fixture's era as it would any server's.
  const mcpServers = {
    [SERVER_NAME]: { type: "http", url: fixtureUrl },
    [TASKS_SERVER_NAME]: { command: process.execPath, args: [TASKS_FIXTURE_PATH] },
  };
  writeFileSync(config, JSON.stringify({ mcpServers }));
  const ready = (name) => `\\[${name}\\] ready`;
  const { child, output } = await startUntil({
    args: [CLI_PATH, "serve", "--http", "127.0.0.1:0", "--config", config, "--mode", "passthrough", "--no-watch"],
    env: { CODEMUX_HOME: join(dir, "home") },
    pattern: new RegExp(`${ready(SERVER_NAME)}[\\s\\S]*${ready(TASKS_SERVER_NAME)}|${ready(TASKS_SERVER_NAME)}[\\s\\S]*${ready(SERVER_NAME)}`),
    what: "codemux",
  });
  const url = output().match(/serving (http:\/\/127\.0\.0\.1:\d+)\/mcp/)?.[1];
  if (!url) throw new Error(`codemux did not say where it serves. Its output:\n${output()}`);
  return { child, url };
}

/** The everything-server, and codemux in front of it and of the tasks fixture, behind the name shim (`url`); `close()` ends all three. */
export async function startStack(dir) {
  const children = [];
  let shim;
  const close = async () => {
    await shim?.close();
    for (const child of children) child.kill();
  };
  try {
    const fixture = await startFixture();
    children.push(fixture.child);
    const codemux = await startCodemux({ fixtureUrl: fixture.url, dir });
    children.push(codemux.child);
    const tasksPrefixes = Object.fromEntries(TASKS_TOOLS.map((tool) => [tool, `${TASKS_SERVER_NAME}__`]));
    shim = await startNameShim({ target: codemux.url, prefix: namePrefixes(`${SERVER_NAME}__`, tasksPrefixes) });
    return { url: shim.url, close };
  } catch (error) {
    await close();
    throw error;
  }
}
