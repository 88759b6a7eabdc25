import { parse } from "es-module-lexer/js";
import { resolveSpecifier } from "./module-path.js";
import type { ModuleSet } from "./runtime.js";
import { stripTypes } from "./transform.js";
import type { ModuleResolver } from "./types.js";

/**
 * The common path without esbuild: the snippet's imports are found by a linear lexer, each
 * imported module is stripped of its types once (cached by content) and QuickJS links the modules
 * itself. The snippet's own types are stripped in the worker, so a pathological input costs worker
 * time under the run's deadline, never the caller's event loop. Whatever this path cannot vouch for
 * (a refused or missing import, `import()`, `require`, code the lexer or sucrase cannot read, a
 * module QuickJS cannot link) goes through esbuild instead, which reports errors as before.
 */
export interface FastPlan {
  modules: ModuleSet;
  /** Source map of a linked module (for an error inside it), built on first use. */
  mapOf(path: string): string | undefined;
}

interface CompiledModule {
  code: string;
  /** Specifiers of its static value imports, as written. */
  imports: string[];
  map: string | undefined;
  path: string;
  source: string;
}

/**
 * sucrase's parser is not linear on every input: each `<` in an expression may be re-parsed as
 * type arguments, and nested ones multiply (`<T>(` 16 deep takes 1.6 s, and doubles with each
 * level), and long `?:` chains cost super-linear time. A snippet with more `<` than this, or longer
 * than the limit below, goes through esbuild, whose parser is linear. (Untrusted code is stripped
 * in the worker, under the run's deadline, so even a case missed here never blocks the caller.)
 */
const MAX_FAST_ANGLES = 10;
const MAX_FAST_CHARS = 16 * 1024;
/** Names the QuickJS runtime gives its prelude and libraries (quickjs/libs.ts), which appear in stack frames too. */
const ENGINE_SCRIPTS = new Set(["prelude.js", "format.js", "url.js", "text.js", "base64.js", "clone.js", "serialize.js"]);
/** A line end that is not \n or \r\n. */
const OTHER_LINE_END = /\r(?!\n)|[\u2028\u2029]/;
/**
 * Costly `<` in a module stripped on the caller's thread (each may double the work), and 2^costly
 * times `<` count times length (4 nested generic arrows around 50 `a < b,` in 60 KB took 2.2 s;
 * at this bound the worst measured is under 100 ms).
 */
const MAX_MODULE_COSTLY_ANGLES = 4;
const MAX_MODULE_ANGLE_WORK = 1_000_000;
/** Modules of one snippet at most on the fast path; a larger graph is esbuild's. */
const MAX_MODULES = 256;
/** Compiled modules kept (by source text); the tool wrappers of a large catalog fit. */
const MAX_CACHED_MODULES = 2_000;
/**
 * Characters the cache may hold (keys, stripped code and source maps): saved skills are up to 64 KiB
 * each and there may be thousands, so the count of modules alone does not bound the memory.
 */
const MAX_CACHED_CHARS = 32 * 1024 * 1024;
/** A module's compiled form depends only on its path and source, so it is shared by every run and session. */
const compiled = new Map<string, CompiledModule | "unsupported">();
const cachedSizes = new Map<string, number>();
let cachedChars = 0;

/** For tests: how many modules have been compiled since the process started. */
export let modulesCompiled = 0;

/** The module set of a snippet, or undefined when it must go through esbuild. */
export function planFast(input: { code: string; filename: string; modules?: ModuleResolver }): FastPlan | undefined {
  // Stack frames name the snippet by its filename, so it must not be the name of the engine's own scripts.
  if (ENGINE_SCRIPTS.has(input.filename)) return undefined;
  if (input.code.length > MAX_FAST_CHARS || countAngles(input.code) > MAX_FAST_ANGLES) return undefined;
  // QuickJS counts lines by \n alone; esbuild's map, like the language, also ends them at \r, U+2028 and U+2029.
  if (OTHER_LINE_END.test(input.code)) return undefined;
  const entryImports = valueImports(input.code, { untrusted: true });
  if (!entryImports) return undefined;
  const sources: Record<string, string> = {};
  const links: Record<string, string> = {};
  const used = new Map<string, CompiledModule>();
  const queue: Array<{ importer: string; specifiers: string[] }> = [{ importer: input.filename, specifiers: entryImports }];
  for (let next = queue.shift(); next; next = queue.shift()) {
    for (const specifier of next.specifiers) {
      const resolved = resolveSpecifier(specifier, next.importer);
      if (!resolved.ok || resolved.path === input.filename) return undefined;
      links[linkKey(next.importer, specifier)] = resolved.path;
      if (used.has(resolved.path)) continue;
      if (used.size >= MAX_MODULES) return undefined;
      const source = input.modules?.(resolved.path);
      if (typeof source !== "string") return undefined;
      const module = compile(resolved.path, source);
      if (!module) return undefined;
      used.set(resolved.path, module);
      sources[resolved.path] = module.code;
      queue.push({ importer: resolved.path, specifiers: module.imports });
    }
  }
  return {
    modules: { entry: input.filename, sources, links },
    mapOf: (path) => {
      const module = used.get(path);
      if (!module) return undefined;
      if (module.map === undefined) {
        module.map = stripTypes(module.source, path, { map: true }).map;
        const key = `${path}\n${module.source}`;
        if (module.map !== undefined && compiled.get(key) === module) account(key, module.map.length);
      }
      return module.map;
    },
  };
}

/**
 * The JavaScript a run would get for this module, when it can be preloaded: its path is one imports
 * resolve to, and it imports nothing (a preloaded module is built before any run's modules exist).
 */
export function preloadCode(path: string, source: string): string | undefined {
  const resolved = resolveSpecifier(path, "");
  if (!resolved.ok || resolved.path !== path || ENGINE_SCRIPTS.has(path)) return undefined;
  const module = compile(path, source);
  return module && module.imports.length === 0 ? module.code : undefined;
}

function countAngles(code: string): number {
  let angles = 0;
  for (let at = code.indexOf("<"); at !== -1 && angles <= MAX_FAST_ANGLES; at = code.indexOf("<", at + 1)) angles++;
  return angles;
}

/** How the worker's module normalizer finds what `specifier` means in `importer`. */
export function linkKey(importer: string, specifier: string): string {
  return `${importer}\n${specifier}`;
}

function compile(path: string, source: string): CompiledModule | undefined {
  const key = `${path}\n${source}`;
  const cached = compiled.get(key);
  if (cached !== undefined) {
    // Refreshed, so the modules in use stay when the cache is full.
    compiled.delete(key);
    compiled.set(key, cached);
    return cached === "unsupported" ? undefined : cached;
  }
  let module: CompiledModule | "unsupported" = "unsupported";
  const imports = cheapToStrip(source) ? valueImports(source) : undefined;
  if (imports) {
    try {
      modulesCompiled++;
      module = { code: stripTypes(source, path).code, imports, map: undefined, path, source };
    } catch {
      module = "unsupported";
    }
  }
  compiled.set(key, module);
  account(key, key.length + (module === "unsupported" ? 0 : module.code.length));
  return module === "unsupported" ? undefined : module;
}

/** Adds characters held for a cached module, and evicts the least recently used past either limit. */
function account(key: string, chars: number): void {
  cachedSizes.set(key, (cachedSizes.get(key) ?? 0) + chars);
  cachedChars += chars;
  while (compiled.size > MAX_CACHED_MODULES || (cachedChars > MAX_CACHED_CHARS && compiled.size > 1)) {
    const oldest = compiled.keys().next().value as string;
    compiled.delete(oldest);
    cachedChars -= cachedSizes.get(oldest) ?? 0;
    cachedSizes.delete(oldest);
  }
}

/**
 * Whether sucrase strips this module in bounded time. Modules are stripped on the caller's thread,
 * and some are written by the model (saved skills, up to 64 KiB), so they get the snippet's kind of
 * guard, tighter: each `<` that may start type parameters or a type assertion (`<T,>(x = <T,>(...`,
 * `<any>(<any>(...`) doubles the work nested inside it, and each `<` after a name may be read as type
 * arguments up to the next `;` (`a < b, a < b, ...` is quadratic). Only a `<` that follows a name
 * (not a keyword), `)` or `]` on its own line counts as the cheap kind; everything else, comments
 * and strings included, counts as costly. A module over the limits makes the snippet go through esbuild.
 */
function cheapToStrip(source: string): boolean {
  let costly = 0;
  let angles = 0;
  for (let at = source.indexOf("<"); at !== -1; at = source.indexOf("<", at + 1)) {
    angles++;
    if (!afterOperand(source, at) && ++costly > MAX_MODULE_COSTLY_ANGLES) return false;
    // Each `<` may scan the rest of the module, and each costly one doubles all of it.
    if (2 ** costly * angles * source.length > MAX_MODULE_ANGLE_WORK) return false;
  }
  return true;
}

/** Keywords after which `<` starts an expression (`return <T>x`, `=> <T,>() => ...`). */
const EXPRESSION_KEYWORDS = new Set([
  "return",
  "typeof",
  "void",
  "delete",
  "await",
  "yield",
  "in",
  "of",
  "instanceof",
  "new",
  "case",
  "throw",
  "else",
  "do",
  "default",
  "as",
  "satisfies",
  "extends",
  "keyof",
  "readonly",
  "export",
]);

/** Whether the `<` at `at` follows a name, `)` or `]` on the same line (spaces and tabs between). */
function afterOperand(source: string, at: number): boolean {
  let end = at;
  while (end > 0 && (source[end - 1] === " " || source[end - 1] === "\t")) end--;
  const before = source[end - 1] ?? "";
  if (before === ")" || before === "]") return true;
  if (!/[\w$]/.test(before)) return false;
  let start = end - 1;
  while (start > 0 && end - start < 12 && /[\w$]/.test(source[start - 1] as string)) start--;
  return !EXPRESSION_KEYWORDS.has(source.slice(start, end));
}

/**
 * The specifiers of a module's static imports and re-exports, type-only ones left out as
 * TypeScript leaves them out; undefined when the module needs esbuild: it has `import()`,
 * `import.meta` or `require`, or the lexer cannot read it (it throws on what it does not understand).
 */
function valueImports(code: string, options: { untrusted?: boolean } = {}): string[] | undefined {
  // esbuild refuses require() with a clear message; the fast path leaves that to it.
  if (code.includes("require")) return undefined;
  if (hasParameterProperty(code)) return undefined;
  let imports: ReturnType<typeof parse>[0];
  let exports: ReturnType<typeof parse>[1];
  try {
    [imports, exports] = parse(code);
  } catch {
    return undefined;
  }
  if (options.untrusted && !keywordsSeen(code, imports, exports)) return undefined;
  const specifiers: string[] = [];
  for (const found of imports) {
    // 1 is a static import or re-export; dynamic import(), import.meta and source phase imports are esbuild's.
    if (found.t !== 1 || found.n === undefined) return undefined;
    // `import type A, { b } from` is not TypeScript, but sucrase drops it silently: esbuild reports it.
    if (/^import\s+type\s+[A-Za-z_$][\w$]*\s*,/.test(code.slice(found.ss, found.ss + 300))) return undefined;
    if (isTypeOnly(code, found.ss)) continue;
    specifiers.push(found.n);
  }
  return specifiers;
}

/**
 * `import type { A } from`, `import type * as A from` or `import type A from`; `import type from "x"`
 * imports a default named type.
 */
function isTypeOnly(code: string, start: number): boolean {
  if (!code.startsWith("import", start)) return false;
  const rest = code.slice(start + 6, start + 300);
  const match = /^\s+type\s+(?:[{*]|([A-Za-z_$][\w$]*)\s+from(?![\w$]))/.exec(rest);
  return match !== null && match[1] !== "from";
}

/**
 * A constructor parameter property (`constructor(private url: string)`). sucrase assigns it in the
 * constructor body while QuickJS runs class fields natively, before that body, so a field that reads
 * it (`base = this.url + "/api"`) would see undefined; esbuild assigns parameter properties first.
 * A modifier inside a constructor's parameter list leaves the module to esbuild (so does a list this
 * scan cannot vouch for: one holding a quote, a slash, or longer than it looks); a `declare readonly`
 * field elsewhere in the class does not.
 */
const PARAMETER_PROPERTY = /(?<![\w$.])(?:public|private|protected|readonly|override)\s+[A-Za-z_$]/;
/** Each constructor's parameter list is scanned this far at most, so the check stays linear in the code. */
const MAX_PARAMETER_LIST = 2_000;

function hasParameterProperty(code: string): boolean {
  for (let at = code.indexOf("constructor"); at !== -1; at = code.indexOf("constructor", at + 11)) {
    let i = at + 11;
    while (i < code.length && /\s/.test(code[i] as string)) i++;
    if (code[i] !== "(") continue;
    const start = i;
    let depth = 0;
    let end = -1;
    for (; i < code.length && i - start < MAX_PARAMETER_LIST; i++) {
      const c = code[i] as string;
      if (c === '"' || c === "'" || c === "`" || c === "/") return true;
      if (c === "(" || c === "[" || c === "{") depth++;
      else if ((c === ")" || c === "]" || c === "}") && --depth === 0) {
        end = i;
        break;
      }
    }
    if (end < 0 || PARAMETER_PROPERTY.test(code.slice(start, end))) return true;
  }
  return false;
}

/** The words that start an import or a re-export, outside identifiers. */
const IMPORT_WORD = /(?<![\w$])import(?![\w$])/g;
const EXPORT_WORD = /(?<![\w$])export(?![\w$])/g;

/**
 * es-module-lexer reads JavaScript, not TypeScript, and only top-level statements: in `a! / b` it
 * takes `/` for the start of a regular expression and skips what follows, and it does not look
 * inside blocks. An import it does not see is never checked, and sucrase drops it when its binding
 * is unused, so a missing or refused module would pass silently. Every `import` word must be the
 * start of an import the lexer found, and every `export` not followed by a word (`export {`,
 * `export *`) a re-export or local export it found; otherwise esbuild, which parses TypeScript,
 * decides. A comment or string that says "import" costs only the fast path.
 */
function keywordsSeen(code: string, imports: ReturnType<typeof parse>[0], exports: ReturnType<typeof parse>[1]): boolean {
  const starts = new Set(imports.map((found) => found.ss));
  for (const match of code.matchAll(IMPORT_WORD)) if (!starts.has(match.index)) return false;
  // Both in source order: one pointer finds the first exported name after each `export`.
  const names = exports.map((found) => found.s).sort((a, b) => a - b);
  let name = 0;
  for (const match of code.matchAll(EXPORT_WORD)) {
    const at = match.index;
    if (starts.has(at)) continue;
    const next = /\S/.exec(code.slice(at + 6, at + 200))?.[0];
    // `export const`, `export default`, `export type`, `export =`: nothing is imported.
    if (next !== undefined && /[A-Za-z_$=]/.test(next)) continue;
    if (next !== "{") return false;
    // A local `export { a, b as c }`: the lexer must have seen one of its names.
    while (name < names.length && (names[name] as number) <= at) name++;
    const close = code.indexOf("}", at);
    if (close === -1 || name === names.length || (names[name] as number) >= close) return false;
  }
  return true;
}
