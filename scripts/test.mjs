#!/usr/bin/env node
// Runs every workspace package's `test` script, N at a time (default 2), the longest suites first, so the
// slowest one (the CLI's) never starts last and CI's wall time is close to the total divided by N. turbo
// cannot order its tasks that way. Lines are prefixed with the package's name; the exit code is 1 if any
// suite failed, after all of them ran. The environment passes through (CI's lanes-off pass sets its switches).
//
//   node scripts/test.mjs [--only pool,server,http,cli] [--concurrency 2]
import { spawn } from "node:child_process";
import { basename, delimiter, join } from "node:path";
import { parseArgs } from "node:util";
import { root, workspacePackages } from "./lib/workspace.mjs";

// Longest first, by the durations of CI's runs (2026-12), server before the CLI: in CI's lanes-off pass (pool, server,
// http, cli) the CLI's trimmed suite then takes http after it while the server's takes pool, the shortest pairing.
// A package not named runs after these, in name order.
const LONGEST_FIRST = ["server", "apps/cli", "http", "pool", "jobs", "core", "sandbox", "codegen", "redis"];

const { values } = parseArgs({
  options: { only: { type: "string" }, concurrency: { type: "string", default: "2" }, help: { type: "boolean" } },
});
if (values.help) {
  console.log("usage: node scripts/test.mjs [--only DIR,DIR] [--concurrency N]\n  DIR is a folder name under packages/ or apps/ (cli = apps/cli)");
  process.exit(0);
}
const concurrency = Number(values.concurrency);
function fail(message) {
  console.error(message);
  process.exit(2);
}
if (!Number.isInteger(concurrency) || concurrency < 1) fail(`--concurrency must be a whole number above 0, not "${values.concurrency}".`);

const all = workspacePackages({ includePrivate: true }).filter((p) => p.manifest.scripts?.test);
const key = (p) => (p.dir.includes("/apps/") ? `apps/${basename(p.dir)}` : basename(p.dir));
let chosen = all;
if (values.only) {
  const wanted = values.only.split(",").map((s) => (s === "cli" ? "apps/cli" : s.trim()));
  const unknown = wanted.filter((w) => !all.some((p) => key(p) === w));
  if (unknown.length > 0) fail(`No package with a test script in ${unknown.join(", ")}; there are: ${all.map(key).join(", ")}.`);
  chosen = all.filter((p) => wanted.includes(key(p)));
}
const rank = (p) => {
  const i = LONGEST_FIRST.indexOf(key(p));
  return i === -1 ? LONGEST_FIRST.length : i;
};
const queue = [...chosen].sort((a, b) => rank(a) - rank(b) || key(a).localeCompare(key(b)));

const children = new Set();
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(130);
  });
}

/** Streams a child's output with each line prefixed, keeping a partial last line until it ends. */
function prefixed(stream, out, prefix) {
  let rest = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop();
    if (lines.length > 0) out.write(lines.map((l) => `${prefix}${l}\n`).join(""));
  });
  stream.on("end", () => {
    if (rest) out.write(`${prefix}${rest}\n`);
  });
}

function run(pkg) {
  const started = Date.now();
  // The script as a package manager runs it (its bin folders first on the PATH), without a pnpm per suite.
  const PATH = [join(pkg.dir, "node_modules/.bin"), join(root, "node_modules/.bin"), process.env.PATH].join(delimiter);
  const child = spawn(pkg.manifest.scripts.test, { shell: true, cwd: pkg.dir, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PATH } });
  children.add(child);
  const prefix = `${pkg.name}:test: `;
  prefixed(child.stdout, process.stdout, prefix);
  prefixed(child.stderr, process.stderr, prefix);
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      children.delete(child);
      resolve({ pkg, ok: code === 0, code: code ?? signal, seconds: (Date.now() - started) / 1000 });
    });
  });
}

const results = [];
const startedAll = Date.now();
await Promise.all(
  Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
    for (let pkg = queue.shift(); pkg; pkg = queue.shift()) results.push(await run(pkg));
  }),
);

console.log(`\n${results.length} suites in ${((Date.now() - startedAll) / 1000).toFixed(0)} s:`);
for (const r of results)
  console.log(`  ${r.ok ? "pass" : "FAIL"}  ${r.pkg.name.padEnd(24)} ${r.seconds.toFixed(0).padStart(5)} s${r.ok ? "" : `  (exit ${r.code})`}`);
const failed = results.filter((r) => !r.ok);
if (failed.length > 0) {
  console.error(`\nFailed: ${failed.map((r) => r.pkg.name).join(", ")}`);
  process.exitCode = 1;
}
