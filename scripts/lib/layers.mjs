// The layer direction of SPEC.md §1 ("an arrow is imports; nothing imports upward"), as data:
// which @codemux/* packages each package's source may import, type imports included.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/** Folder under packages/ (or apps/) -> the workspace packages its src/ may import. */
export const ALLOWED_IMPORTS = {
  core: [],
  catalog: ["core"],
  codegen: ["core", "catalog"],
  sandbox: ["core"],
  pool: ["core", "catalog"],
  redis: ["core"],
  hooks: ["core"],
  jobs: ["core"],
  server: ["core", "catalog", "codegen", "sandbox", "pool"],
  http: ["core", "catalog", "codegen", "sandbox", "pool", "server"],
  // What the CLI runs: the composition of everything below it but the test servers.
  runtime: ["core", "catalog", "codegen", "sandbox", "pool", "server", "http", "hooks", "jobs", "redis"],
  "test-servers": [],
};

// `from "@codemux/x"`, `import("@codemux/x/sub")`, `import "@codemux/x"`: every way a module names another package.
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']@codemux\/([a-z0-9-]+)(?:\/[^"']*)?["']/g;

function sourceFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(?:ts|mts|js|mjs)$/.test(entry.name) && !/\.test(?:-d)?\.ts$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * Every import in a package's `src/` (tests aside: integration tests may reach up) of a workspace package
 * it may not import, as `file:line: message`. `apps/*` wire everything and are not checked; a package
 * folder missing from ALLOWED_IMPORTS is reported, so a new package states its layer.
 */
export function layerViolations(root) {
  const problems = [];
  const packagesDir = join(root, "packages");
  for (const name of readdirSync(packagesDir).sort()) {
    if (!existsSync(join(packagesDir, name, "package.json"))) continue;
    const allowed = ALLOWED_IMPORTS[name];
    if (!allowed) {
      problems.push(`packages/${name}: not in scripts/lib/layers.mjs's ALLOWED_IMPORTS; add it with the packages it may import (SPEC.md §1).`);
      continue;
    }
    for (const file of sourceFiles(join(packagesDir, name, "src"))) {
      const text = readFileSync(file, "utf8");
      for (const match of text.matchAll(IMPORT)) {
        const target = match[1];
        if (target === name || allowed.includes(target)) continue;
        const line = text.slice(0, match.index).split("\n").length;
        problems.push(
          `${relative(root, file)}:${line}: @codemux/${name} imports @codemux/${target}, against the layers of SPEC.md §1 (it may import ${allowed.length ? allowed.map((a) => `@codemux/${a}`).join(", ") : "no other package"}).`,
        );
      }
    }
  }
  return problems;
}
