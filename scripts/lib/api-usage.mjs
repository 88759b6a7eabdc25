// The parts of scripts/api-usage.mjs that read files: the names an API report lists, and the names
// a module imports from `@codemux/*` packages.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** The names each entry point of a package's API report lists, keyed by import specifier. */
export function reportedNames(pkg) {
  let text;
  try {
    text = readFileSync(join(pkg.dir, "etc", "api.md"), "utf8");
  } catch {
    return new Map();
  }
  const entries = new Map();
  let current;
  let inCode = false;
  for (const line of text.split("\n")) {
    const heading = /^## `([^`]+)`/.exec(line);
    if (heading) {
      current = new Set();
      entries.set(heading[1], current);
      continue;
    }
    if (line.startsWith("```")) {
      inCode = !inCode;
      continue;
    }
    if (!inCode || !current) continue;
    const declared =
      /^(?:export )?(?:abstract )?(?:class|interface|type|function|const|let|var|enum|namespace) ([A-Za-z_$][\w$]*)/.exec(line) ??
      /^([A-Za-z_$][\w$]*)(?:: | = )/.exec(line);
    if (declared) current.add(declared[1]);
  }
  return entries;
}

export function* sourceFiles(dir) {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "dist" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (/\.(m|c)?[jt]sx?$/.test(name) && !name.endsWith(".d.ts")) yield path;
  }
}

/** Every `{ a, b as c }` imported or re-exported from a specifier, and `const { a } = await import(...)`. */
export function importsOf(text) {
  const found = [];
  const named = /(?:import|export)\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?\{([^}]*)\}\s*from\s*["'](@codemux\/[^"']+)["']/g;
  const dynamic = /\{([^}]*)\}\s*=\s*await\s+import\(\s*["'](@codemux\/[^"']+)["']\s*\)/g;
  for (const pattern of [named, dynamic]) {
    for (const match of text.matchAll(pattern)) {
      for (const part of match[1].split(",")) {
        const name = part
          .trim()
          .replace(/^type\s+/, "")
          .split(/\s+as\s+|\s*:\s*/)[0]
          .trim();
        if (name) found.push({ specifier: match[2], name });
      }
    }
  }
  return found;
}
