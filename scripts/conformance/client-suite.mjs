// The referee's client scenarios with codemux as the client under test (client-under-test.mjs): every client scenario
// each revision requires, run one at a time per worker (each starts its own codemux), each held to
// expected-client-failures-<revision>.yaml by the referee (an unlisted failure, or a listed one that passes, fails it).
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "../lib/workspace.mjs";
import { requiredScenarios, runLogged } from "./referee.mjs";
import { readExpectedFailures } from "./results.mjs";

const CLIENT = join(root, "scripts", "conformance", "client-under-test.mjs");
/** Scenarios run at once: each is a referee, codemux and the driving client, three Node processes. */
const WORKERS = 2;
/** The referee's time for one client run (its default, 30 s, is short on a loaded two-core machine). */
const CLIENT_TIMEOUT_MS = 60_000;
const RUN_TIMEOUT_MS = CLIENT_TIMEOUT_MS + 30_000;

export const expectedClientFile = (revision) => join(root, "scripts", "conformance", `expected-client-failures-${revision}.yaml`);

/** One scenario at one revision's wire; resolves with the referee's exit code, its verdict line and its log. */
async function runScenario({ referee, revision, scenario, dir }) {
  const name = scenario.replaceAll("/", "-");
  const outDir = join(dir, `client-${revision}`, name);
  mkdirSync(outDir, { recursive: true });
  const log = join(dir, `client-${revision}-${name}.log`);
  // The referee splits the command at spaces: neither path may hold one.
  const command = `${process.execPath} ${CLIENT}`;
  const args = ["client", "--command", command, "--scenario", scenario, "--spec-version", revision, "--timeout", String(CLIENT_TIMEOUT_MS)];
  args.push("--expected-failures", expectedClientFile(revision), "-o", outDir);
  const { code, timedOut } = await runLogged(referee, args, { log, timeoutMs: RUN_TIMEOUT_MS });
  const totals = readFileSync(log, "utf8").match(/Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/);
  const verdict = totals ? `${totals[1]}/${totals[2]} passed${totals[4] !== "0" ? `, ${totals[4]} warnings` : ""}` : "no result";
  return { scenario, code: timedOut ? 1 : code, timedOut, verdict, log };
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
