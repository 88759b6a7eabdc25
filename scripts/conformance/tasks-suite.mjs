// The referee's tasks-* scenarios (the Tasks extension, SEP-2663), which it runs but scores for no
// revision: scored here. Each runs twice: against the tasks fixture directly (every check must pass,
// so the fixture is shown to be right) and through codemux (the name shim in front of it). A check
// that fails through codemux must be listed in tasks-gaps.yaml with its reason, and a listed one that
// passes fails the run too.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { root } from "../lib/workspace.mjs";
import { startUntil, TASKS_FIXTURE_PATH } from "./processes.mjs";
import { runLogged } from "./referee.mjs";
import { passed, readExpectedFailures, readResults } from "./results.mjs";

const run = promisify(execFile);
export const TASKS_GAPS = join(root, "scripts", "conformance", "tasks-gaps.yaml");
const SCENARIO_TIMEOUT_MS = 120_000;

/** The referee's server scenarios named tasks-* (every suite). */
async function tasksScenarios(referee) {
  const { stdout } = await run(referee.node, [referee.cli, "list"], { maxBuffer: 4 * 1024 * 1024 });
  const section = stdout.split(/^Server scenarios.*$/m)[1]?.split(/^\S.*$/m)[0] ?? "";
  return [...section.matchAll(/^\s+- (tasks-\S+)/gm)].map((m) => m[1]);
}

/** Runs every scenario against `url`; resolves with their checks by scenario (the referee's logs go to `dir`). */
async function runAll({ referee, scenarios, url, dir, name }) {
  const outDir = join(dir, `tasks-${name}`);
  for (const scenario of scenarios) {
    const log = join(dir, `tasks-${name}-${scenario}.log`);
    await runLogged(referee, ["server", "--url", url, "--scenario", scenario, "-o", outDir], { log, timeoutMs: SCENARIO_TIMEOUT_MS });
  }
  return readResults(outDir);
}

/** `scenario:check` of each check that did not pass (or `scenario` when it ran none). */
function failures(scenarios, results) {
  const failed = [];
  for (const scenario of scenarios) {
    const checks = results.get(scenario);
    if (!checks || checks.length === 0) failed.push(scenario);
    else for (const check of checks) if (!passed([check])) failed.push(`${scenario}:${check.id}`);
  }
  return failed;
}

/** Runs the tasks-* scenarios; resolves with whether they scored as listed, and the README lines. */
export async function runTasksSuite({ referee, url, dir }) {
  const scenarios = await tasksScenarios(referee);
  let ok = true;
  const fixture = await startUntil({ args: [TASKS_FIXTURE_PATH, "--http", "0"], pattern: /listening (\d+)/, what: "The conformance tasks fixture" });
  try {
    const direct = failures(scenarios, await runAll({ referee, scenarios, url: `http://127.0.0.1:${fixture.match[1]}/mcp`, dir, name: "fixture" }));
    if (direct.length > 0) {
      ok = false;
      console.error(`\nThe tasks fixture fails on its own (${direct.join(", ")}): fix packages/test-servers/src/conformance-tasks-server.ts. Logs: ${dir}`);
    }
  } finally {
    fixture.child.kill();
  }
  const results = await runAll({ referee, scenarios, url, dir, name: "codemux" });
  const failed = failures(scenarios, results);
  const listed = readExpectedFailures(TASKS_GAPS);
  const names = new Set(listed.map(({ entry }) => entry));
  const unlisted = failed.filter((entry) => !names.has(entry));
  const nowPassing = [...names].filter((entry) => !failed.includes(entry));
  const passing = scenarios.filter((scenario) => passed(results.get(scenario)));
  console.log(`\n== tasks-* (through codemux) ==\n${passing.length} of ${scenarios.length} scenarios pass; failing checks: ${failed.join(", ") || "none"}`);
  if (unlisted.length > 0) {
    ok = false;
    console.error(`\nThese tasks-* checks fail through codemux and are not in ${TASKS_GAPS}: ${unlisted.join(", ")}. Logs: ${dir}`);
  }
  if (nowPassing.length > 0) {
    ok = false;
    console.error(`\nThese tasks-* checks are listed in ${TASKS_GAPS} but pass now: take them out: ${nowPassing.join(", ")}.`);
  }
  const lines = [
    `- **tasks-\\*** (the Tasks extension, scored here): ${passing.length} of the ${scenarios.length} scenarios pass through codemux; each passes against the tasks fixture directly.`,
  ];
  const byReason = new Map();
  for (const { entry, reason } of listed) byReason.set(reason, [...(byReason.get(reason) ?? []), entry]);
  if (byReason.size > 0) lines.push("  Failing through codemux (`scripts/conformance/tasks-gaps.yaml`), by reason:");
  for (const [reason, entries] of byReason) lines.push(`  - ${reason}: ${entries.map((entry) => `\`${entry}\``).join(", ")}.`);
  return { ok, lines };
}

/** Run alone (`node scripts/conformance/tasks-suite.mjs`, after `pnpm build`): codemux in front of both fixtures, then only the tasks-* scenarios. */
async function main() {
  if (process.argv.includes("--help")) {
    console.log(
      "Usage: node scripts/conformance/tasks-suite.mjs\nRuns only the referee's tasks-* scenarios, against the tasks fixture directly and through codemux (run pnpm build first).\nA failing check not in scripts/conformance/tasks-gaps.yaml, or a listed one that passes, fails the run.",
    );
    return;
  }
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { installReferee } = await import("./referee.mjs");
  const { startStack } = await import("./processes.mjs");
  const referee = await installReferee();
  const dir = mkdtempSync(join(tmpdir(), "codemux-conformance-tasks-"));
  let stack;
  let ok = false;
  try {
    stack = await startStack(dir);
    ({ ok } = await runTasksSuite({ referee, url: `${stack.url}/mcp`, dir }));
  } finally {
    await stack?.close();
    if (ok) rmSync(dir, { recursive: true, force: true });
  }
  if (!ok) process.exitCode = 1;
  else console.log("\ntasks-*: every check passed or failed as listed in tasks-gaps.yaml.");
}

if (process.argv[1] && import.meta.url === (await import("node:url")).pathToFileURL(process.argv[1]).href)
  main().catch((error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
