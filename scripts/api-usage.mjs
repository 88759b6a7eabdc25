#!/usr/bin/env node
// Which exported names of each library package other code imports: for every name in a package's
// API report (`packages/<name>/etc/api.md`), the workspace folders (packages, apps, scripts) whose
// source imports it from `@codemux/<name>`, and whether the package README names it. A name nothing outside its package imports is a candidate
// to keep internal (issue 45 item 4). `node scripts/api-usage.mjs [package...] [--unused]`.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { importsOf, reportedNames, sourceFiles } from "./lib/api-usage.mjs";
import { root, workspacePackages } from "./lib/workspace.mjs";

const args = process.argv.slice(2);
const unusedOnly = args.includes("--unused");
const only = args.filter((a) => !a.startsWith("--"));

/** The workspace folder a file belongs to: `packages/x`, `apps/x` or `scripts`. */
function ownerOf(file) {
  const parts = relative(root, file).split("/");
  return parts[0] === "packages" || parts[0] === "apps" ? `${parts[0]}/${parts[1]}` : parts[0];
}

const uses = new Map(); // "specifier name" -> Set of owners
for (const top of ["packages", "apps", "scripts"]) {
  for (const file of sourceFiles(join(root, top))) {
    for (const { specifier, name } of importsOf(readFileSync(file, "utf8"))) {
      const key = `${specifier} ${name}`;
      if (!uses.has(key)) uses.set(key, new Set());
      uses.get(key).add(ownerOf(file));
    }
  }
}

let total = 0;
let unusedTotal = 0;
for (const pkg of workspacePackages().filter((p) => p.dir.startsWith(join(root, "packages")))) {
  if (only.length && !only.some((o) => pkg.name.endsWith(`/${o}`))) continue;
  const own = relative(root, pkg.dir);
  let readme = "";
  try {
    readme = readFileSync(join(pkg.dir, "README.md"), "utf8");
  } catch {}
  for (const [specifier, names] of reportedNames(pkg)) {
    const rows = [...names].sort().map((name) => {
      const users = [...(uses.get(`${specifier} ${name}`) ?? [])].sort();
      const documented = new RegExp(`\\b${name.replace(/\$/g, "\\$")}\\b`).test(readme);
      return { name, outside: users.filter((u) => u !== own), self: users.includes(own), documented };
    });
    const unused = rows.filter((r) => r.outside.length === 0);
    total += rows.length;
    unusedTotal += unused.length;
    console.log(`\n${specifier}: ${rows.length} names, ${unused.length} imported by nothing outside ${own}`);
    for (const row of unusedOnly ? unused : rows) {
      const where = row.outside.length ? row.outside.join(", ") : "-";
      console.log(`  ${row.name.padEnd(34)} ${row.documented ? "README " : "       "}${where}${row.self ? " (+self)" : ""}`);
    }
  }
}
console.log(`\n${total} names, ${unusedTotal} imported by nothing outside their package`);
