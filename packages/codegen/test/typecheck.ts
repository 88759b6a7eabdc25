import { execFile } from "node:child_process";
import { mkdir, symlink } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import ts from "typescript";

const VIRTUAL_ROOT = "/virtual/";
const require = createRequire(import.meta.url);

/**
 * Type-checks in-memory modules, keyed by path without `.ts` (`mcp/bridge`, `case/foo`), as one program under
 * strict settings, with `mcp/*` resolving among them and `zod` to the installed one. Returns the diagnostics as `path(line,col): message`.
 */
export function typeCheck(modules: Record<string, string>): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2022.d.ts"],
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: false,
    isolatedModules: true,
    verbatimModuleSyntax: true,
    noEmit: true,
    skipLibCheck: true,
    paths: { "mcp/*": [`${VIRTUAL_ROOT}mcp/*`], zod: [dirname(require.resolve("zod/package.json"))] },
  };
  const files = new Map(Object.entries(modules).map(([path, source]) => [`${VIRTUAL_ROOT}${path}.ts`, source]));
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile, directoryExists } = host;
  host.directoryExists = (name) => name.startsWith(VIRTUAL_ROOT) || name === VIRTUAL_ROOT.slice(0, -1) || (directoryExists?.call(host, name) ?? false);
  host.fileExists = (name) => files.has(name) || fileExists.call(host, name);
  host.readFile = (name) => files.get(name) ?? readFile.call(host, name);
  host.getSourceFile = (name, language, ...rest) => {
    const source = files.get(name);
    return source === undefined ? getSourceFile.call(host, name, language, ...rest) : ts.createSourceFile(name, source, language, true);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  return ts.getPreEmitDiagnostics(program).map(formatDiagnostic);
}

function formatDiagnostic(diagnostic: ts.Diagnostic): string {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
  if (diagnostic.file === undefined || diagnostic.start === undefined) return message;
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  return `${diagnostic.file.fileName.replace(VIRTUAL_ROOT, "")}(${line + 1},${character + 1}): ${message}`;
}

/** Runs the workspace's `tsc -p dir` (the command a user runs on a written tree, after installing its zod: linked here); resolves with its output. */
export async function runTsc(dir: string): Promise<{ ok: boolean; output: string }> {
  const tsc = require.resolve("typescript/bin/tsc");
  await mkdir(join(dir, "node_modules"), { recursive: true });
  await symlink(dirname(require.resolve("zod/package.json")), join(dir, "node_modules", "zod"), "dir").catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EEXIST") throw error;
  });
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [tsc, "-p", dir], { maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, output: stdout };
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${stdout}${stderr}` };
  }
}

/** Evaluates a generated zod expression (TypeScript, as json-schema-to-zod writes it) against the real zod. */
export function evaluateZod<T>(source: string, z: unknown): T {
  const { outputText } = ts.transpileModule(`const schema = ${source};`, { compilerOptions: { target: ts.ScriptTarget.ES2022 } });
  return new Function("z", `${outputText}\nreturn schema;`)(z) as T;
}
