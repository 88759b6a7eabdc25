// The referee's client scenarios with codemux as the client under test (client-under-test.mjs): every client scenario
// each revision requires, run one at a time per worker (each starts its own codemux), each held to
// expected-client-failures-<revision>.yaml by the referee (an unlisted failure, or a listed one that passes, fails it).
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "../lib/workspace.mjs";
import { requiredScenarios } from "./referee.mjs";
import { readExpectedFailures } from "./results.mjs";

const CLIENT = join(root, "scripts", "conformance", "client-under-test.mjs");
/** Scenarios run at once: each is a referee, codemux and the driving client, three Node processes. */
const WORKERS = 2;
/** The referee's time for one client run (its default, 30 s, is short on a loaded two-core machine). */
const CLIENT_TIMEOUT_MS = 60_000;
const RUN_TIMEOUT_MS = CLIENT_TIMEOUT_MS + 30_000;

export const expectedClientFile = (revision) => join(root, "scripts", "conformance", `expected-client-failures-${revision}.yaml`);

/** One scenario at one revision's wire; resolves with the referee's exit code, its verdict line and its log. */
function runScenario({ referee, revision, scenario, dir }) {
  const name = scenario.replaceAll("/", "-");
  const outDir = join(dir, `client-${revision}`, name);
  mkdirSync(outDir, { recursive: true });
  const log = join(dir, `client-${revision}-${name}.log`);
  const args = [
    referee.cli,
    "client",
    // The referee splits the command at spaces: neither path may hold one.
    "--command",
    `${process.execPath} ${CLIENT}`,
    "--scenario",
    scenario,
    "--spec-version",
    revision,
    "--timeout",
    String(CLIENT_TIMEOUT_MS),
    "--expected-failures",
    expectedClientFile(revision),
    "-o",
    outDir,
  ];
  const child = spawn(referee.node, args, { stdio: ["ignore", "pipe", "pipe"] });
  const file = createWriteStream(log);
  child.stdout.pipe(file);
  child.stderr.pipe(file);
  return new Promise((resolve) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill();
    }, RUN_TIMEOUT_MS);
    child.on("close", (code) => {
      clearTimeout(timer);
      file.end(() => {
        const text = readFileSync(log, "utf8");
        const totals = text.match(/Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/);
        const verdict = totals ? `${totals[1]}/${totals[2]} passed${totals[4] !== "0" ? `, ${totals[4]} warnings` : ""}` : "no result";
        resolve({ scenario, code: timedOut ? 1 : (code ?? 1), timedOut, verdict, log });
      });
    });
  });
}

/** Runs every required client scenario of `revisions`; resolves true when each met its expected failures. */
export async function runClientSuite({ referee, dir, revisions, only }) {
  let ok = true;
  for (const revision of revisions) {
    // Every entry says why (the referee reads the file itself; this only checks that each has its reason).
    readExpectedFailures(expectedClientFile(revision));
    const scenarios = (await requiredScenarios(referee, revision, "Client")).filter((s) => !only || only.includes(s));
    const queue = [...scenarios];
    const results = [];
    const worker = async () => {
      for (let scenario = queue.shift(); scenario !== undefined; scenario = queue.shift()) {
        results.push(await runScenario({ referee, revision, scenario, dir }));
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    console.log(`\n== client suite, ${revision} ==`);
    for (const scenario of scenarios) {
      const result = results.find((r) => r.scenario === scenario);
      console.log(`${result.code === 0 ? "✓" : "✗"} ${scenario}: ${result.verdict}${result.timedOut ? " (stopped: it took too long)" : ""}`);
      if (result.code !== 0) {
        ok = false;
        console.error(`  ${scenario} failed beyond ${expectedClientFile(revision)}, or a listed failure passed; its log: ${result.log}`);
      }
    }
  }
  return ok;
}
