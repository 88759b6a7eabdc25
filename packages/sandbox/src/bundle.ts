import { build, stop, transform, type Message, type Plugin } from "esbuild";
import { resolveSpecifier } from "./module-path.js";
import type { ModuleResolver, SandboxErrorInfo } from "./types.js";

/** esbuild namespace of every module in a bundle; none of them lives on disk. */
export const VIRTUAL_NAMESPACE = "codemux-sandbox";
const PLUGIN_NAME = "codemux-virtual-modules";

export interface BundleInput {
  code: string;
  filename: string;
  modules?: ModuleResolver;
}

/**
 * esbuild reports each error with the whole line it is on, so a long line packed with errors
 * (`export default ------...1`) makes its answer grow with the square of the line: a 100 KB line
 * is gigabytes, which takes the host process down. A line of n characters holds at most n/2 errors
 * of n characters each; the sum over all lines must stay under this many characters. 200 M allows
 * one line of about 20,000 characters (a pasted data literal); at that size a line packed with errors
 * costs esbuild about 0.5 GB for 2 s (measured); esbuild's logLimit does not bound what the API returns.
 */
const MAX_ERROR_TEXT = 200 * 1024 * 1024;

/** esbuild's long-lived service died (a Go stack overflow on deeply nested code); builds fail with this until it is restarted. */
const SERVICE_DIED = /The service (was stopped|is no longer running)/;
/** Counts service restarts, so that builds failing together restart it once. */
let serviceGeneration = 0;

export type BundleOutcome = { ok: true; code: string; map: string } | { ok: false; error: SandboxErrorInfo };

/** Bundles a snippet and its virtual imports into one ES module with an external source map. */
export async function bundleSnippet(input: BundleInput): Promise<BundleOutcome> {
  const tooLong = checkLineLengths(input.code, input.filename);
  if (tooLong) return { ok: false, error: tooLong };
  const unavailable = await checkUnusedImports(input);
  if (unavailable) return { ok: false, error: unavailable };
  const generation = serviceGeneration;
  try {
    const output = await build({
      // The entry comes in on stdin: one plugin round trip fewer than a virtual entry point.
      stdin: { contents: input.code, sourcefile: input.filename, loader: "ts" },
      bundle: true,
      write: false,
      format: "esm",
      platform: "neutral",
      target: "es2020",
      supported: { "top-level-await": true },
      sourcemap: "external",
      sourcesContent: false,
      // Printed code is indented by nesting depth, which grows with its square (20 000 nested blocks
      // printed half a gigabyte); without whitespace it grows with the snippet. The source map keeps positions.
      minifyWhitespace: true,
      outfile: "bundle.js",
      logLevel: "silent",
      // An empty tsconfig keeps esbuild from looking for one on disk.
      tsconfigRaw: "{}",
      plugins: [virtualModules(input)],
    });
    const map = output.outputFiles.find((file) => file.path.endsWith(".map"));
    const code = output.outputFiles.find((file) => file.path.endsWith(".js"));
    if (!map || !code) return { ok: false, error: { kind: "internal", message: "esbuild produced no output." } };
    return { ok: true, code: code.text, map: map.text };
  } catch (error) {
    const first = (error as { errors?: Message[] }).errors?.[0];
    if (!first && SERVICE_DIED.test(String(error))) {
      // Without a restart every later build fails the same way; stop() makes the next build start a new service.
      if (generation === serviceGeneration) {
        serviceGeneration++;
        await stop();
      }
      const message = `${input.filename}: The bundler failed on this snippet (is it nested too deeply?) and was restarted.`;
      return { ok: false, error: { kind: "syntax", message } };
    }
    if (!first) return { ok: false, error: { kind: "internal", message: `Bundling failed: ${String(error)}` } };
    return { ok: false, error: describeBuildError(first, input.filename) };
  }
}

/**
 * TypeScript drops an import whose bindings go unused before it is resolved, so `import fs from "node:fs"`
 * alone would pass silently. Keeping every import (verbatimModuleSyntax) and checking each specifier makes
 * it the same clear error as a used one; `import type` and imports of known modules pass.
 */
async function checkUnusedImports(input: BundleInput): Promise<SandboxErrorInfo | undefined> {
  if (!/\bimport\b/.test(input.code)) return undefined;
  let code: string;
  try {
    code = (await transform(input.code, { loader: "ts", format: "esm", logLevel: "silent", tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } } })).code;
  } catch {
    // A syntax error: the build reports it with its position.
    return undefined;
  }
  // esbuild prints every import as a statement of its own, with the specifier in double quotes.
  for (const [, specifier] of code.matchAll(/^import\s(?:[^"]*?\sfrom\s*)?"((?:[^"\\]|\\.)*)"/gm)) {
    const name = JSON.parse(`"${specifier}"`) as string;
    const resolved = resolveSpecifier(name, input.filename);
    const reason = !resolved.ok ? resolved.reason : typeof input.modules?.(resolved.path) !== "string" ? "no such module is available to the sandbox" : undefined;
    if (!reason) continue;
    const at = Math.max(0, Math.max(input.code.indexOf(`"${name}"`), input.code.indexOf(`'${name}'`)));
    const before = input.code.slice(0, at);
    const line = before.split("\n").length;
    const column = at - before.lastIndexOf("\n");
    return { kind: "import", message: `${input.filename}:${line}:${column}: Cannot import "${name}": ${reason}.`, line, column };
  }
  return undefined;
}

/** Refuses a snippet whose lines could make esbuild's error report too large (see MAX_ERROR_TEXT). */
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
  if (total <= MAX_ERROR_TEXT) return undefined;
  const message = `${filename}:${longest.line}:1: The snippet's lines are too long to bundle safely (line ${longest.line} has ${longest.length} characters). Break long lines, or build large data in several statements.`;
  return { kind: "syntax", message, line: longest.line, column: 1 };
}

function virtualModules(input: BundleInput): Plugin {
  const sources = new Map<string, string>();
  return {
    name: PLUGIN_NAME,
    setup(build) {
      // Every path goes through here, so nothing is ever read from disk.
      build.onResolve({ filter: /.*/ }, (args) => {
        const refuse = (reason: string) => ({ errors: [{ text: `Cannot import "${args.path}": ${reason}.` }] });
        if (args.kind === "dynamic-import") return refuse("dynamic import() is not available in the sandbox");
        const resolved = resolveSpecifier(args.path, args.importer);
        if (!resolved.ok) return refuse(resolved.reason);
        if (!sources.has(resolved.path)) {
          const source = input.modules?.(resolved.path);
          if (typeof source !== "string") return refuse("no such module is available to the sandbox");
          sources.set(resolved.path, source);
        }
        return { path: resolved.path, namespace: VIRTUAL_NAMESPACE };
      });
      build.onLoad({ filter: /.*/, namespace: VIRTUAL_NAMESPACE }, (args) => ({
        contents: sources.get(args.path) ?? "",
        loader: "ts",
      }));
    },
  };
}

function describeBuildError(message: Message, filename: string): SandboxErrorInfo {
  const kind = message.pluginName === PLUGIN_NAME || /^(Could not resolve|No matching export)/.test(message.text) ? "import" : "syntax";
  const text = message.text.replaceAll(`"${VIRTUAL_NAMESPACE}:`, '"');
  const location = message.location;
  if (!location) return { kind, message: `${filename}: ${text}` };
  const file = stripNamespace(location.file);
  const line = location.line;
  const column = location.column + 1;
  const info: SandboxErrorInfo = { kind, message: `${file}:${line}:${column}: ${text}` };
  return file === filename ? { ...info, line, column } : info;
}

/** esbuild prefixes paths outside the file namespace with `namespace:`. */
export function stripNamespace(file: string): string {
  const prefix = `${VIRTUAL_NAMESPACE}:`;
  return file.startsWith(prefix) ? file.slice(prefix.length) : file;
}
