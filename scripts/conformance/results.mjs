// What a referee run left in its output folder, the checked-in expected failures with their
// reasons, and the README section made from both.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Per scenario, its checks' statuses, from `<out>/server-<scenario>-<timestamp>/checks.json`. */
export function readResults(outDir) {
  const results = new Map();
  if (!existsSync(outDir)) return results;
  for (const entry of readdirSync(outDir)) {
    const match = entry.match(/^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/);
    const file = join(outDir, entry, "checks.json");
    if (!match || !existsSync(file)) continue;
    results.set(
      match[1],
      JSON.parse(readFileSync(file, "utf8")).map((check) => ({ id: check.id, status: check.status })),
    );
  }
  return results;
}

/** Statuses that pass, as the referee counts them: a WARNING (a SHOULD not met) fails its baseline too. */
const PASSING = new Set(["SUCCESS", "SKIPPED", "INFO"]);

/** A scenario passes when it ran at least one check and all of them passed. */
export const passed = (checks) => checks !== undefined && checks.length > 0 && checks.every((c) => PASSING.has(c.status));

/** The entries of an expected-failures file with the reason each line carries after `#`; throws for an entry without one. */
export function readExpectedFailures(file) {
  const entries = [];
  for (const [index, line] of readFileSync(file, "utf8").split("\n").entries()) {
    const match = line.match(/^\s+-\s+(\S+)\s*(?:#\s*(.*\S))?\s*$/);
    if (!match) continue;
    if (!match[2]) throw new Error(`${file}:${index + 1}: the expected failure ${match[1]} has no reason: add one after "#" on its line.`);
    entries.push({ entry: match[1], reason: match[2] });
  }
  return entries;
}

/** The README lines for one revision's run. */
export function readmeLines({ revision, required, results, expected }) {
  const passing = required.filter((scenario) => passed(results.get(scenario)));
  const lines = [`- **${revision}**: ${passing.length} of the ${required.length} required server scenarios pass.`];
  const byReason = new Map();
  for (const { entry, reason } of expected) byReason.set(reason, [...(byReason.get(reason) ?? []), entry]);
  if (byReason.size > 0) lines.push("  Expected failures (`scenario` or `scenario:check`), by reason:");
  for (const [reason, entries] of byReason) lines.push(`  - ${reason}: ${entries.map((entry) => `\`${entry}\``).join(", ")}.`);
  return lines;
}
