#!/usr/bin/env node
// Rewrites biome.json's "overrides" so that every file with a finding today reports it as a
// warning, while the same rules stay errors for every other (new) file. Run it after fixing
// findings to shrink the list: `pnpm lint:baseline`. It never adds a rule, only downgrades; overrides
// that configure a rule for a set of files (not a baseline's "warn") are kept as they are.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const configPath = resolve(root, "biome.json");
const original = readFileSync(configPath, "utf8");
const config = JSON.parse(original);
const isBaseline = (override) => Object.values(override.linter?.rules ?? {}).every((group) => Object.values(group).every((level) => level === "warn"));
const kept = (config.overrides ?? []).filter((override) => !isBaseline(override));
config.overrides = kept;
writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);

// Biome from the workspace's own install (pnpm may not be on PATH); exit 0 (no error) or 1 (errors found) is an answer,
// anything else (not installed, crashed) leaves biome.json as it was: an empty baseline would turn every finding into an error.
const biome = resolve(root, "node_modules/.bin/biome");
const run = spawnSync(biome, ["lint", "--reporter=github", "--max-diagnostics=none", "."], {
  cwd: root,
  encoding: "utf8",
  maxBuffer: 64 * 1024 * 1024,
});
if (run.error || (run.status !== 0 && run.status !== 1)) {
  writeFileSync(configPath, original);
  console.error(`lint-baseline: biome did not run (${run.error?.message ?? `exit ${run.status}`}); biome.json is unchanged.`);
  process.exit(1);
}
const output = run.stdout;

/** rule ("group/name") -> files with a finding of it */
const byRule = new Map();
for (const match of output.matchAll(/^::(?:error|warning) title=lint\/(\w+)\/(\w+),file=([^,]+),/gm)) {
  const rule = `${match[1]}/${match[2]}`;
  const file = relative(root, match[3]);
  if (!byRule.has(rule)) byRule.set(rule, new Set());
  byRule.get(rule).add(file);
}

const baseline = [...byRule.entries()]
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([rule, files]) => {
    const [group, name] = rule.split("/");
    return { includes: [...files].sort(), linter: { rules: { [group]: { [name]: "warn" } } } };
  });
config.overrides = [...kept, ...baseline];
writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
// In biome's own layout, so `pnpm format:check` passes on the file this wrote.
spawnSync(biome, ["format", "--write", configPath], { cwd: root, stdio: "ignore" });
for (const { includes, linter } of baseline) {
  const [group, rules] = Object.entries(linter.rules)[0];
  console.log(`${group}/${Object.keys(rules)[0]}: ${includes.length} file(s) kept as warnings`);
}
