// The referee's http-custom-header-server-validation scenario (SEP-2243 `Mcp-Param-*` headers), which
// 2026-07-28 does not require and which the everything-server cannot exercise: none of its tools marks a
// parameter with `x-mcp-header`, so every check reports "not testable". Scored here against codemux in
// front of a server whose tool does (packages/test-servers/src/param-headers.ts): codemux exposes that
// tool in passthrough with its annotations, so it must validate the client's headers itself (item 1 of
// issue 44). Every check must pass.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "../lib/workspace.mjs";
import { CLI_PATH, startUntil } from "./processes.mjs";
import { runLogged } from "./referee.mjs";
import { passed, readResults } from "./results.mjs";

export const HEADERS_SCENARIO = "http-custom-header-server-validation";
const HEADERS_FIXTURE_PATH = join(root, "packages", "test-servers", "dist", "param-headers.js");
const TIMEOUT_MS = 120_000;

/** Runs the scenario through codemux; resolves with whether every check passed, and the README lines. */
export async function runHeadersSuite({ referee, dir }) {
  const children = [];
  try {
    const fixture = await startUntil({ args: [HEADERS_FIXTURE_PATH, "--http", "0"], pattern: /listening (\d+)/, what: "The param-headers server" });
    children.push(fixture.child);
    const config = join(dir, "headers-codemux.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { headers: { type: "http", url: `http://127.0.0.1:${fixture.match[1]}/mcp` } } }));
    const codemux = await startUntil({
      args: [CLI_PATH, "serve", "--http", "127.0.0.1:0", "--config", config, "--mode", "passthrough", "--no-watch"],
      env: { CODEMUX_HOME: join(dir, "headers-home") },
      pattern: /\[headers\] ready/,
      what: "codemux (in front of the param-headers server)",
    });
    children.push(codemux.child);
    const url = codemux.output().match(/serving (http:\/\/127\.0\.0\.1:\d+)\/mcp/)?.[1];
    if (!url) throw new Error(`codemux did not say where it serves. Its output:\n${codemux.output()}`);
    const outDir = join(dir, "headers");
    const log = join(dir, "headers.log");
    const args = ["server", "--url", `${url}/mcp`, "--scenario", HEADERS_SCENARIO, "--spec-version", "2026-07-28", "-o", outDir];
    await runLogged(referee, args, { log, timeoutMs: TIMEOUT_MS });
    const checks = readResults(outDir).get(HEADERS_SCENARIO) ?? [];
    const failing = checks.filter((check) => !passed([check])).map((check) => check.id);
    const ok = passed(checks);
    console.log(
      `\n== ${HEADERS_SCENARIO} (through codemux, a server that marks x-mcp-header) ==\n${checks.length - failing.length} of ${checks.length} checks pass${failing.length > 0 ? `; failing: ${failing.join(", ")}` : ""}`,
    );
    if (!ok) console.error(`\n${HEADERS_SCENARIO} failed through codemux (each check must pass). Log: ${log}`);
    const lines = [
      `- **${HEADERS_SCENARIO}** (SEP-2243; not required, and the everything-server marks no parameter, so it runs against codemux in front of a [server that does](packages/test-servers/src/param-headers.ts)): ${checks.length - failing.length} of its ${checks.length} checks pass.`,
    ];
    return { ok, lines };
  } finally {
    for (const child of children) child.kill();
  }
}
