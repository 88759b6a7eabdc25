#!/usr/bin/env node
// Runs the MCP conformance suite's required server scenarios against codemux (`pnpm conformance`,
// and CI): the vendored everything-server is codemux's one downstream, a name shim maps the
// suite's fixed names to codemux's `everything__` ones, and every failure must be listed, with a
// reason, in scripts/conformance/expected-failures-<revision>.yaml (a listed one that passes fails
// the run too). `--write-readme` rewrites the README's results section; without it a stale section
// fails the run. The referee's tasks-* scenarios, which it scores for no revision, are scored here
// (scripts/conformance/tasks-suite.mjs) against a second downstream, the tasks fixture. Run `pnpm build` first; the referee is installed into $CODEMUX_CONFORMANCE_HOME
// (default: codemux-conformance in the temp folder) and kept there for the next run.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { root } from "./lib/workspace.mjs";
import { CLI_PATH, FIXTURE_PATH, startStack, TASKS_FIXTURE_PATH } from "./conformance/processes.mjs";
import { runTasksSuite } from "./conformance/tasks-suite.mjs";
import { installReferee, REFEREE, requiredServerScenarios, runLogged } from "./conformance/referee.mjs";
import { runClientSuite } from "./conformance/client-suite.mjs";
import { runHeadersSuite } from "./conformance/headers-suite.mjs";
import { passed, readExpectedFailures, readmeLines, readResults } from "./conformance/results.mjs";

const REVISIONS = ["2026-07-28", "2025-11-25"];
/** A scenario that passes through codemux today: if it does not, the run did not reach the suite's checks. */
const MUST_PASS = "tools-call-simple-text";
const README = join(root, "README.md");
const BEGIN = "<!-- conformance:begin (written by pnpm conformance --write-readme) -->";
const END = "<!-- conformance:end -->";
const RUN_TIMEOUT_MS = 150_000;

const expectedFile = (revision) => join(root, "scripts", "conformance", `expected-failures-${revision}.yaml`);

/** Runs the referee for one revision; resolves with its exit code and whether it was stopped (its output goes to `log`). */
function runReferee({ referee, url, revision, outDir, log }) {
  const args = ["server", "--url", `${url}/mcp`, "--requirements", revision, "--expected-failures", expectedFile(revision), "-o", outDir];
  return runLogged(referee, args, { log, timeoutMs: RUN_TIMEOUT_MS });
}

/** The referee's verdict lines (scenario marks, totals, the baseline report) from its log. */
function summary(log) {
  const lines = readFileSync(log, "utf8").split("\n");
  const start = lines.findIndex((line) => /^[✓✗] /.test(line));
  return lines.slice(Math.max(start, 0)).join("\n").trim();
}

function readmeSection(sections) {
  return [
    BEGIN,
    `Referee: \`${REFEREE.name}@${REFEREE.version}\` (its server scenarios that each revision requires), against codemux over`,
    "HTTP in passthrough mode with the suite's everything-server as its downstream",
    "([vendored](packages/test-servers/vendor/conformance-everything-server.ts)), unpinned (`protocol: auto`: codemux speaks",
    "2026-07-28 to it, whichever era the referee speaks to codemux), and beside it, for the `tasks-*` scenarios, a",
    "[tasks fixture](packages/test-servers/src/conformance-tasks-server.ts) with the tools they call; a test-only shim maps the",
    "suite's fixed tool and prompt names to codemux's `everything__` and `tasks__` ones. `pnpm conformance` runs it (CI too);",
    "a failure not listed in `scripts/conformance/expected-failures-<revision>.yaml` (or, for `tasks-*`,",
    "`scripts/conformance/tasks-gaps.yaml`), or a listed one that passes, fails it.",
    "",
    ...sections.flat(),
    END,
  ].join("\n");
}

function updateReadme(section, write) {
  const text = readFileSync(README, "utf8");
  const [before, rest] = text.split(BEGIN);
  const after = rest?.split(END)[1];
  if (after === undefined) throw new Error(`README.md has no conformance section between "${BEGIN}" and "${END}".`);
  const next = `${before}${section}${after}`;
  if (next === text) return true;
  if (write) writeFileSync(README, next);
  return write;
}

async function main() {
  const write = process.argv.includes("--write-readme");
  for (const path of [CLI_PATH, FIXTURE_PATH, TASKS_FIXTURE_PATH]) {
    if (!existsSync(path)) throw new Error(`${path} is missing: run pnpm build first.`);
  }
  const referee = await installReferee();
  const dir = mkdtempSync(join(tmpdir(), "codemux-conformance-run-"));
  let stack;
  let failed = false;
  try {
    stack = await startStack(dir);
    const sections = [];
    for (const revision of REVISIONS) {
      const outDir = join(dir, `results-${revision}`);
      const log = join(dir, `referee-${revision}.log`);
      const { code, timedOut } = await runReferee({ referee, url: stack.url, revision, outDir, log });
      console.log(`\n== ${revision} ==\n${summary(log)}`);
      const results = readResults(outDir);
      if (timedOut) {
        failed = true;
        console.error(`\nThe ${revision} run took longer than ${RUN_TIMEOUT_MS / 1000} s and was stopped. Its log so far: ${log}`);
      } else if (code !== 0) {
        failed = true;
        console.error(`\nThe ${revision} run found failures not in ${expectedFile(revision)}, or listed ones that now pass (above). Its full log: ${log}`);
      }
      const expected = readExpectedFailures(expectedFile(revision));
      // Where MUST_PASS is itself listed, the referee already holds it to failing.
      const mustPass = !expected.some(({ entry }) => entry.split(":")[0] === MUST_PASS);
      if (mustPass && !passed(results.get(MUST_PASS))) {
        failed = true;
        console.error(`\n${MUST_PASS} did not pass in the ${revision} run: the suite did not reach codemux's tools. Full log: ${log}`);
      }
      const required = await requiredServerScenarios(referee, revision);
      sections.push(readmeLines({ revision, required, results, expected }));
    }
    const tasks = await runTasksSuite({ referee, url: `${stack.url}/mcp`, dir });
    if (!tasks.ok) failed = true;
    sections.push(tasks.lines);
    const headers = await runHeadersSuite({ referee, dir });
    if (!headers.ok) failed = true;
    sections.push(headers.lines);
    // The client suite: codemux as the client under test of every required client scenario.
    if (!(await runClientSuite({ referee, dir, revisions: REVISIONS }))) failed = true;
    if (!failed && !updateReadme(readmeSection(sections), write)) {
      failed = true;
      console.error("\nThe README's conformance section is out of date: run `pnpm conformance --write-readme` and commit README.md.");
    }
  } finally {
    await stack?.close();
    if (!failed) rmSync(dir, { recursive: true, force: true });
  }
  if (failed) process.exitCode = 1;
  else console.log(`\nConformance: every required server scenario and every tasks-* check passed or failed as listed (${REFEREE.name}@${REFEREE.version}).`);
}

main().catch((error) => {
  console.error(error.message);
  process.exitCode = 1;
});
