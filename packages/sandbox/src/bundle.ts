import type { BuildOptions, Message, Plugin } from "esbuild";
import { BundleGate } from "./bundle-gate.js";
import {
  DEFAULT_BUNDLE_TIMEOUT_MS,
  DEFAULT_MAX_CODE_BYTES,
  DEFAULT_MAX_CONCURRENT_BUNDLES,
  MAX_BUNDLE_ERROR_TEXT,
  MAX_ARROWS,
  MAX_BUNDLE_MESSAGE_LENGTH,
  MAX_NESTING_DEPTH,
} from "./defaults.js";
import { resolveSpecifier, showSpecifier } from "./module-path.js";
import { formatBytes } from "./output-buffer.js";
import type { ModuleResolver, ModuleSuggester, SandboxErrorInfo } from "./types.js";

/** esbuild, loaded at the first snippet that needs it: most runs of the CLI (`list`, `call`, `status`) never bundle, and its loading is ~10 % of a start. */
let loadedEsbuild: Promise<typeof import("esbuild")> | undefined;
const esbuild = () => (loadedEsbuild ??= import("esbuild"));

/** esbuild namespace of every module in a bundle; none of them lives on disk. */
export const VIRTUAL_NAMESPACE = "codemux-sandbox";
const PLUGIN_NAME = "codemux-virtual-modules";

export interface BundleInput {
  code: string;
  filename: string;
  modules?: ModuleResolver;
  /** Module paths close to one that does not exist, for the import error's did-you-mean. */
  suggest?: ModuleSuggester;
  /** Largest snippet in UTF-8 bytes; default 1 MiB. */
  maxCodeBytes?: number;
  /** Epoch milliseconds by which bundling must be done. */
  deadline?: number;
}

export type BundleOutcome = { ok: true; code: string; map: string } | { ok: false; error: SandboxErrorInfo };

/** esbuild's long-lived service died (a Go stack overflow on deeply nested code); builds fail with this until it is restarted. */
const SERVICE_DIED = /The service (was stopped|is no longer running)/;
/** Counts service restarts, so that builds failing together restart it once. */
let serviceGeneration = 0;
let restarting: Promise<void> | undefined;
/** A build still running this long when the service died is the likely cause; it is tried again alone. */
const SUSPECT_AFTER_MS = 500;

/**
 * esbuild is one service for the whole process, and each build may hold a large error report, so
 * builds pass a gate: a few at once, and one alone when it is retried after the service died.
 */
const gate = new BundleGate(DEFAULT_MAX_CONCURRENT_BUNDLES);

/**
 * Bundles a snippet and its virtual imports into one ES module with an external source map.
 * esbuild's service is shared by every run: when it dies during a build (deep nesting overflows
 * its stack), short builds that died with it are simply tried again, and a long one (the likely
 * cause) is tried again alone, so only a snippet that kills the service by itself gets the error.
 * A build that takes longer than its budget is stopped by restarting the service.
 */
export async function bundleSnippet(input: BundleInput): Promise<BundleOutcome> {
  const refused = checkSnippet(input);
  if (refused) return { ok: false, error: refused };
  let alone = false;
  for (let attempt = 1; ; attempt++) {
    const release = await gate.enter(alone);
    const generation = serviceGeneration;
    const started = Date.now();
    const budget = Math.min(DEFAULT_BUNDLE_TIMEOUT_MS, (input.deadline ?? Number.POSITIVE_INFINITY) - started);
    const outcome = await withinBudget(bundleOnce(input), budget);
    if (outcome === "too_slow") {
      // Stopping the service is the only way to stop a build; the builds it takes along are tried again.
      await restartService(generation);
      release();
      return { ok: false, error: tooSlow(input, budget) };
    }
    release();
    if (outcome !== "service_died") return outcome;
    await restartService(generation);
    if (alone || attempt >= 3) {
      const message = `${input.filename}: The bundler failed on this snippet (is it nested too deeply?) and was restarted.`;
      return { ok: false, error: { kind: "syntax", message } };
    }
    alone = Date.now() - started >= SUSPECT_AFTER_MS;
  }
}

/**
 * The linear checks every snippet passes before any parser sees it (esbuild's or sucrase's): its
 * size, its lines' lengths and its nesting.
 */
export function checkSnippet(input: BundleInput): SandboxErrorInfo | undefined {
  return checkSize(input) ?? checkLineLengths(input.code, input.filename) ?? checkNesting(input.code, input.filename);
}

/** Resolves with the work's outcome, or "too_slow" when the budget runs out first. */
async function withinBudget<T>(work: Promise<T>, budgetMs: number): Promise<T | "too_slow"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"too_slow">((resolve) => {
    timer = setTimeout(() => resolve("too_slow"), Math.max(0, budgetMs));
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

function tooSlow(input: BundleInput, budgetMs: number): SandboxErrorInfo {
  if (budgetMs < DEFAULT_BUNDLE_TIMEOUT_MS) {
    return { kind: "timeout", message: `${input.filename}: The run passed its deadline while the snippet was being bundled.` };
  }
  const message = `${input.filename}: Bundling this snippet took longer than ${DEFAULT_BUNDLE_TIMEOUT_MS / 1000} s and was stopped; it is too large or nested too deeply.`;
  return { kind: "budget", message };
}

async function bundleOnce(input: BundleInput): Promise<BundleOutcome | "service_died"> {
  try {
    const unavailable = /\bimport\b/.test(input.code) ? await checkImports(input) : undefined;
    if (unavailable) return { ok: false, error: unavailable };
    const output = await (await esbuild()).build({
      ...commonOptions(input),
      sourcemap: "external",
      sourcesContent: false,
      // Printed code is indented by nesting depth, which grows with its square (20 000 nested blocks
      // printed half a gigabyte); without whitespace it grows with the snippet. The source map keeps positions.
      minifyWhitespace: true,
      outfile: "bundle.js",
      plugins: [virtualModules(input)],
    });
    const map = (output.outputFiles ?? []).find((file) => file.path.endsWith(".map"));
    const code = (output.outputFiles ?? []).find((file) => file.path.endsWith(".js"));
    if (!map || !code) return { ok: false, error: { kind: "internal", message: "esbuild produced no output." } };
    return { ok: true, code: code.text, map: map.text };
  } catch (error) {
    const first = (error as { errors?: Message[] }).errors?.[0];
    if (!first && SERVICE_DIED.test(String(error).slice(0, 1_000))) return "service_died";
    if (!first) return { ok: false, error: { kind: "internal", message: `Bundling failed: ${cut(String(error))}` } };
    return { ok: false, error: describeBuildError(first, input.filename) };
  }
}

/** Without a restart every later build fails the same way; stop() makes the next build start a new service. */
async function restartService(generation: number): Promise<void> {
  if (generation === serviceGeneration) {
    serviceGeneration++;
    restarting = esbuild()
      .then(({ stop }) => stop())
      .catch(() => undefined);
  }
  await restarting;
}

function commonOptions(input: BundleInput): BuildOptions {
  return {
    // The entry comes in on stdin: one plugin round trip fewer than a virtual entry point.
    stdin: { contents: input.code, sourcefile: input.filename, loader: "ts" },
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2020",
    supported: { "top-level-await": true },
    logLevel: "silent",
    // An empty tsconfig keeps esbuild from looking for one on disk.
    tsconfigRaw: "{}",
  };
}

/**
 * TypeScript drops an import whose bindings go unused before it is resolved, so `import fs from "node:fs"`
 * alone would pass silently. A first pass keeps every import (verbatimModuleSyntax), leaves them all
 * external and checks each specifier, so an unused one is the same clear error as a used one, at its
 * line; `import type` and imports of known modules pass. esbuild's own parser finds them, in linear time.
 */
async function checkImports(input: BundleInput): Promise<SandboxErrorInfo | undefined> {
  const { build } = await esbuild();
  try {
    await build({
      ...commonOptions(input),
      tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
      plugins: [
        {
          name: PLUGIN_NAME,
          setup(pass) {
            pass.onResolve({ filter: /.*/ }, (args) => {
              const reason = refusal(args.path, args.importer, args.kind, input);
              return reason ? { errors: [{ text: `Cannot import ${showSpecifier(args.path)}: ${reason}.` }] } : { path: args.path, external: true };
            });
          },
        },
      ],
    });
    return undefined;
  } catch (error) {
    const first = (error as { errors?: Message[] }).errors?.[0];
    // Syntax errors are the real build's to report, with the same positions.
    if (!first || first.pluginName !== PLUGIN_NAME) {
      if (!first) throw error;
      return undefined;
    }
    return describeBuildError(first, input.filename);
  }
}

/** Why a specifier may not be imported, or undefined when it may. */
function refusal(specifier: string, importer: string, kind: string, input: BundleInput): string | undefined {
  if (kind === "dynamic-import") return "dynamic import() is not available in the sandbox";
  const resolved = resolveSpecifier(specifier, importer === "<stdin>" ? input.filename : importer);
  if (!resolved.ok) return resolved.reason;
  if (typeof input.modules?.(resolved.path) !== "string") return missingModule(resolved.path, input);
  return undefined;
}

/** Why an import of a module the resolver does not have fails, with the paths spelled close to it. */
function missingModule(path: string, input: BundleInput): string {
  const close = input.suggest?.(path).slice(0, 3) ?? [];
  return `no such module is available to the sandbox${close.length ? ` (did you mean ${close.map((c) => `"${c}"`).join(", ")}?)` : ""}`;
}

function checkSize(input: BundleInput): SandboxErrorInfo | undefined {
  const limit = input.maxCodeBytes ?? DEFAULT_MAX_CODE_BYTES;
  if (typeof input.code !== "string") return { kind: "invalid_request", message: `${input.filename}: The code must be a string.` };
  // A character is at most 3 UTF-8 bytes: count bytes only when the length alone does not decide.
  if (input.code.length <= limit / 3 || (input.code.length <= limit && Buffer.byteLength(input.code) <= limit)) return undefined;
  const message = `${input.filename}: The snippet is larger than the ${formatBytes(limit)} limit. Send less code, and fetch data with tools instead of pasting it.`;
  return { kind: "budget", message };
}

/**
 * Refuses a snippet whose lines could make esbuild's error report too large. esbuild reports each
 * error with the whole line it is on, so a long line packed with errors (`export default ------...1`)
 * makes its answer grow with the square of the line: a 100 KB line is gigabytes. A line of n
 * characters holds at most n/2 errors of n characters each; the sum over all lines must stay under
 * MAX_BUNDLE_ERROR_TEXT, which allows one line of about 11,000 characters (a pasted data literal).
 * esbuild's logLimit does not bound what the API returns.
 */
/**
 * Refuses code nested deeper than any snippet needs before esbuild sees it: esbuild crashes or runs
 * for minutes on some deep nestings (brackets, runs of prefix operators, arrow chains), and while it
 * does, other snippets wait to bundle. One linear scan, skipping strings and comments.
 */
export function checkNesting(code: string, filename: string): SandboxErrorInfo | undefined {
  let depth = 0;
  let deepest = { depth: 0, at: 0 };
  let unaryRun = 0;
  let longestRun = { length: 0, at: 0 };
  let arrows = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code[i] as string;
    if (c === '"' || c === "'" || c === "`") {
      // Skip the string; an unterminated one ends the scan (esbuild will report it).
      for (i++; i < code.length && code[i] !== c; i++) if (code[i] === "\\") i++;
      continue;
    }
    if (c === "/" && code[i + 1] === "/") {
      const end = code.indexOf("\n", i);
      i = end === -1 ? code.length : end;
      continue;
    }
    if (c === "/" && code[i + 1] === "*") {
      const end = code.indexOf("*/", i + 2);
      i = end === -1 ? code.length : end + 1;
      continue;
    }
    if (c === "(" || c === "[" || c === "{") {
      depth++;
      if (depth > deepest.depth) deepest = { depth, at: i };
    } else if (c === ")" || c === "]" || c === "}") depth = Math.max(0, depth - 1);
    if (c === "!" || c === "~" || c === "+" || c === "-") {
      if (++unaryRun > longestRun.length) longestRun = { length: unaryRun, at: i };
    } else if (c !== " " && c !== "\t" && c !== "\n" && c !== "\r") unaryRun = 0;
    if (c === "=" && code[i + 1] === ">") arrows++;
  }
  const where = (at: number) => {
    let line = 1;
    for (let i = code.indexOf("\n"); i !== -1 && i < at; i = code.indexOf("\n", i + 1)) line++;
    return line;
  };
  if (deepest.depth > MAX_NESTING_DEPTH) {
    const line = where(deepest.at);
    return {
      kind: "syntax",
      message: `${filename}:${line}:1: The snippet nests brackets ${deepest.depth} deep; at most ${MAX_NESTING_DEPTH} are bundled. Flatten it.`,
      line,
      column: 1,
    };
  }
  if (longestRun.length > MAX_NESTING_DEPTH) {
    const line = where(longestRun.at);
    return {
      kind: "syntax",
      message: `${filename}:${line}:1: The snippet chains ${longestRun.length} prefix operators; at most ${MAX_NESTING_DEPTH} are bundled.`,
      line,
      column: 1,
    };
  }
  if (arrows > MAX_ARROWS) return { kind: "syntax", message: `${filename}: The snippet has ${arrows} arrow functions; at most ${MAX_ARROWS} are bundled.` };
  return undefined;
}

function checkLineLengths(code: string, filename: string): SandboxErrorInfo | undefined {
  let total = 0;
  let longest = { line: 0, length: -1 };
  let line = 0;
  for (let start = 0; start <= code.length; ) {
    line++;
    const newline = code.indexOf("\n", start);
    const end = newline === -1 ? code.length : newline;
    const length = end - start;
    total += (length * length) / 2;
    if (length > longest.length) longest = { line, length };
    start = end + 1;
  }
  if (total <= MAX_BUNDLE_ERROR_TEXT) return undefined;
  const message = `${filename}:${longest.line}:1: The snippet's lines are too long to bundle safely (line ${longest.line} has ${longest.length} characters). Break long lines, or build large data in several statements.`;
  return { kind: "syntax", message, line: longest.line, column: 1 };
}

function virtualModules(input: BundleInput): Plugin {
  const sources = new Map<string, string>();
  return {
    name: PLUGIN_NAME,
    setup(pass) {
      // Every path goes through here, so nothing is ever read from disk.
      pass.onResolve({ filter: /.*/ }, (args) => {
        const refuse = (reason: string) => ({ errors: [{ text: `Cannot import ${showSpecifier(args.path)}: ${reason}.` }] });
        if (args.kind === "dynamic-import") return refuse("dynamic import() is not available in the sandbox");
        const resolved = resolveSpecifier(args.path, args.importer);
        if (!resolved.ok) return refuse(resolved.reason);
        if (!sources.has(resolved.path)) {
          const source = input.modules?.(resolved.path);
          if (typeof source !== "string") return refuse(missingModule(resolved.path, input));
          sources.set(resolved.path, source);
        }
        return { path: resolved.path, namespace: VIRTUAL_NAMESPACE };
      });
      pass.onLoad({ filter: /.*/, namespace: VIRTUAL_NAMESPACE }, (args) => ({
        contents: sources.get(args.path) ?? "",
        loader: "ts",
      }));
    },
  };
}

function describeBuildError(message: Message, filename: string): SandboxErrorInfo {
  const kind =
    message.pluginName === PLUGIN_NAME || message.text.startsWith("Could not resolve") || message.text.startsWith("No matching export") ? "import" : "syntax";
  const text = cut(message.text).replaceAll(`"${VIRTUAL_NAMESPACE}:`, '"');
  const location = message.location;
  if (!location) return { kind, message: `${filename}: ${text}` };
  const file = stripNamespace(cut(location.file));
  const line = location.line;
  const column = location.column + 1;
  const info: SandboxErrorInfo = { kind, message: `${file}:${line}:${column}: ${text}` };
  return file === filename ? { ...info, line, column } : info;
}

/** esbuild's messages quote code; only the start of a long one is kept. */
function cut(text: string): string {
  return text.length > MAX_BUNDLE_MESSAGE_LENGTH ? `${text.slice(0, MAX_BUNDLE_MESSAGE_LENGTH)}…` : text;
}

/** esbuild prefixes paths outside the file namespace with `namespace:`. */
export function stripNamespace(file: string): string {
  const prefix = `${VIRTUAL_NAMESPACE}:`;
  return file.startsWith(prefix) ? file.slice(prefix.length) : file;
}
