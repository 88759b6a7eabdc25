#!/usr/bin/env node
// The CLI bundles the @codemux/* libraries, so their own dependencies become the CLI's: this check
// fails when apps/cli/package.json lacks one (as it once lacked typescript, so `save_skill` failed
// for every npx user). Two sources, because neither sees everything:
//  1. each bundled library's manifest: its runtime `dependencies` (found through the workspace
//     graph from the CLI's `@codemux/*` devDependencies), which also covers what a library loads
//     by name at run time (`require.resolve("typescript")`), invisible to the bundler;
//  2. the bundle itself: every external import esbuild left in dist (apps/cli/dist/metafile-esm.json).
// Run after `pnpm build`.
import { builtinModules } from "node:module";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { root, workspacePackages, withWorkspaceDependencies } from "./lib/workspace.mjs";

const all = workspacePackages({ includePrivate: true });
const cli = all.find((p) => p.name === "codemux");
const cliDeps = cli.manifest.dependencies ?? {};
const catalog = readCatalog();
const problems = [];

/** `name`, `@scope/name` of an import path (`@modelcontextprotocol/sdk/types.js` -> `@modelcontextprotocol/sdk`). */
const packageOf = (path) =>
  path
    .split("/")
    .slice(0, path.startsWith("@") ? 2 : 1)
    .join("/");
const isBuiltin = (path) => path.startsWith("node:") || builtinModules.includes(packageOf(path)) || builtinModules.includes(path);

const metafile = join(cli.dir, "dist", "metafile-esm.json");
if (!existsSync(metafile)) {
  console.error(`${metafile} is missing: run pnpm build first.`);
  process.exit(1);
}
const { inputs, outputs } = JSON.parse(readFileSync(metafile, "utf8"));
/** Packages whose code esbuild put in the bundle itself (from node_modules): they need no install. */
const inlined = new Set(Object.keys(inputs).flatMap((path) => [...path.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].map((m) => m[1]).slice(-1)));

// 1. The libraries the CLI bundles, with the libraries they depend on, and their runtime dependencies.
const bundled = new Set();
for (const name of Object.keys(cli.manifest.devDependencies ?? {}).filter((n) => n.startsWith("@codemux/"))) {
  const pkg = all.find((p) => p.name === name);
  if (pkg?.manifest.private) continue;
  for (const inner of withWorkspaceDependencies(pkg, all)) bundled.add(inner);
}
for (const lib of bundled) {
  for (const [dep, range] of Object.entries(lib.manifest.dependencies ?? {})) {
    if (dep.startsWith("@codemux/") || (inlined.has(dep) && !(dep in cliDeps))) continue;
    if (!(dep in cliDeps))
      problems.push(`${lib.name} needs ${dep}@${range} at run time; add it to apps/cli/package.json "dependencies" (the CLI bundles ${lib.name}).`);
    else if (resolveCatalog(cliDeps[dep], dep) !== resolveCatalog(range, dep))
      problems.push(
        `${lib.name} wants ${dep}@${resolveCatalog(range, dep)} but the CLI has ${resolveCatalog(cliDeps[dep], dep)}; use one range (or catalog:).`,
      );
  }
}

// 2. What the built bundle imports from outside.
for (const [file, output] of Object.entries(outputs)) {
  for (const { path, external } of output.imports ?? []) {
    if (!external || isBuiltin(path)) continue;
    if (!(packageOf(path) in cliDeps)) problems.push(`${file} imports ${path}, but apps/cli/package.json has no dependency on ${packageOf(path)}.`);
  }
}

function readCatalog() {
  const text = readFileSync(join(root, "pnpm-workspace.yaml"), "utf8");
  const section = text.split(/^catalog:\s*$/m)[1] ?? "";
  const entries = {};
  for (const line of section.split("\n")) {
    const match = /^\s+"?([^":\s]+)"?:\s*(\S+)\s*$/.exec(line);
    if (match) entries[match[1]] = match[2];
    else if (/^\S/.test(line)) break;
  }
  return entries;
}

/** A range as pnpm publishes it: `catalog:` becomes the workspace catalog's entry. */
function resolveCatalog(range, dep) {
  return range === "catalog:" ? (catalog[dep] ?? range) : range;
}

if (problems.length) {
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
console.log(`apps/cli/package.json has every runtime dependency of the ${bundled.size} libraries it bundles and of its bundle.`);
