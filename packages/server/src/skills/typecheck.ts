import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type TypeScript from "typescript";

/** What a type check gets: the skill and every module it imports (transitively), by specifier. */
export interface SkillCheckInput {
  name: string;
  specifier: string;
  code: string;
  modules: Record<string, string>;
}

/** One import of the skill: its module and the names it takes from it (none for `import * as`). */
export interface SkillImport {
  specifier: string;
  names: string[];
}

export type SkillCheckResult = { ok: true; signature: string; imports: SkillImport[] } | { ok: false; errors: string[]; typeErrors?: true };

/** A type check may take this long; then its worker is stopped and the skill refused. */
export const SKILL_CHECK_TIMEOUT_MS = 30_000;
/** Heap of the type-checking worker: the compiler with the ES2022 library and a skill's modules fit easily. */
const CHECK_WORKER_HEAP_MB = 512;
/** Errors reported for one skill, at most. */
const MAX_REPORTED_ERRORS = 10;

const require = createRequire(import.meta.url);
let queue: Promise<unknown> = Promise.resolve();
let waiting = 0;
/** Checks queued at once, at most: each may take seconds, so a burst of saves is refused rather than queued without end. */
const MAX_WAITING_CHECKS = 4;

/**
 * Type-checks a skill against the modules it imports with the TypeScript compiler, in a worker
 * thread (the compiler takes a second or more and must not hold up other requests), one check at a
 * time, bounded in time and memory. Errors name the skill's line.
 */
export function typeCheckSkill(input: SkillCheckInput, options: { timeoutMs?: number } = {}): Promise<SkillCheckResult> {
  if (waiting >= MAX_WAITING_CHECKS)
    return Promise.resolve({ ok: false, errors: [`${waiting} skills are waiting to be type-checked; save this one again in a moment.`] });
  waiting++;
  const run = queue.then(() => runWorker(input, options.timeoutMs ?? SKILL_CHECK_TIMEOUT_MS)).finally(() => waiting--);
  queue = run.catch(() => undefined);
  return run;
}

function runWorker(input: SkillCheckInput, timeoutMs: number): Promise<SkillCheckResult> {
  // The check runs as its own source in the worker: it refers only to its parameters and globals.
  const source = `const { parentPort, workerData } = require("node:worker_threads");
parentPort.postMessage((${checkSkill.toString()})(require(workerData.typescript), workerData.input, ${MAX_REPORTED_ERRORS}));`;
  return new Promise((resolve) => {
    const worker = new Worker(source, {
      eval: true,
      workerData: { typescript: require.resolve("typescript"), input },
      resourceLimits: { maxOldGenerationSizeMb: CHECK_WORKER_HEAP_MB },
      stdout: true,
      stderr: true,
    });
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve({ ok: false, errors: [`Type-checking took longer than ${timeoutMs / 1000} s; simplify the skill's types.`] });
    }, timeoutMs);
    worker.once("message", (result: SkillCheckResult) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(result);
    });
    worker.once("error", (error) => {
      clearTimeout(timer);
      resolve({ ok: false, errors: [`The type checker failed: ${error.message.slice(0, 300)}`] });
    });
    worker.once("exit", () => {
      clearTimeout(timer);
      resolve({ ok: false, errors: ["The type checker stopped without an answer (out of memory?); simplify the skill."] });
    });
  });
}

/**
 * The check itself, run inside the worker: the skill and its imports as one strict program in
 * memory; the skill must export a function named like it, taking at most one typed input and
 * returning a typed output (not `any`).
 */
export function checkSkill(ts: typeof TypeScript, input: SkillCheckInput, maxErrors: number): SkillCheckResult {
  const root = "/codemux-skill/";
  const globals = `${root}globals.d.ts`;
  const files = new Map<string, string>(Object.entries(input.modules).map(([specifier, source]) => [`${root}${specifier}.ts`, source]));
  const skillFile = `${root}${input.specifier}.ts`;
  files.set(skillFile, input.code);
  // The sandbox's globals besides the ES2022 library.
  files.set(
    globals,
    "declare const console: { log(...values: unknown[]): void; info(...values: unknown[]): void; warn(...values: unknown[]): void; error(...values: unknown[]): void; debug(...values: unknown[]): void };",
  );
  const options: TypeScript.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2022.d.ts"],
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    isolatedModules: true,
    paths: { "mcp/*": [`${root}mcp/*`] },
  };
  // The program sees only these modules and the compiler's own lib typings: no path a skill names reaches the host's files.
  const libFile = ts.getDefaultLibFilePath(options);
  const libDir = libFile.slice(0, libFile.lastIndexOf("/") + 1);
  const isLib = (name: string) => name.startsWith(libDir) && /^lib(\.[a-z0-9]+)*\.d\.ts$/.test(name.slice(libDir.length));
  const read = (name: string) => files.get(name) ?? (isLib(name) ? ts.sys.readFile(name) : undefined);
  const host: TypeScript.CompilerHost = {
    getSourceFile: (name, language) => {
      const text = read(name);
      return text === undefined ? undefined : ts.createSourceFile(name, text, language, true);
    },
    getDefaultLibFileName: () => libFile,
    getDefaultLibLocation: () => libDir.slice(0, -1),
    writeFile: () => undefined,
    getCurrentDirectory: () => root.slice(0, -1),
    getCanonicalFileName: (name) => name,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => "\n",
    fileExists: (name) => files.has(name) || (isLib(name) && ts.sys.fileExists(name)),
    readFile: read,
    directoryExists: (name) => `${name}/`.startsWith(root) || `${name}/` === libDir,
    getDirectories: () => [],
    realpath: (name) => name,
  };
  const program = ts.createProgram([skillFile, globals], options, host);
  const where = (file: TypeScript.SourceFile | undefined, start: number | undefined): string => {
    if (!file || start === undefined) return "";
    const { line, character } = file.getLineAndCharacterOfPosition(start);
    return file.fileName === skillFile ? `line ${line + 1}, column ${character + 1}: ` : `${file.fileName.slice(root.length)} line ${line + 1}: `;
  };
  const errors = ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.category === ts.DiagnosticCategory.Error)
    .map((d) => `${where(d.file, d.start)}${ts.flattenDiagnosticMessageText(d.messageText, " ").slice(0, 500)}`);
  if (errors.length)
    return { ok: false, typeErrors: true, errors: errors.slice(0, maxErrors).concat(errors.length > maxErrors ? [`(${errors.length - maxErrors} more)`] : []) };

  const source = program.getSourceFile(skillFile);
  const checker = program.getTypeChecker();
  const moduleSymbol = source ? checker.getSymbolAtLocation(source) : undefined;
  const exported = moduleSymbol ? checker.getExportsOfModule(moduleSymbol).find((s) => s.name === input.name) : undefined;
  if (!source || !exported)
    return {
      ok: false,
      errors: [`The skill must export a function named ${input.name}: export async function ${input.name}(input: { ... }): Promise<...> { ... }`],
    };
  const type = checker.getTypeOfSymbolAtLocation(exported, source);
  const [signature, ...overloads] = type.getCallSignatures();
  if (!signature || overloads.length) return { ok: false, errors: [`${input.name} must be one function (not ${signature ? "overloaded" : "a value"}).`] };
  const show = (t: TypeScript.Type) =>
    checker.typeToString(t, undefined, ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType);
  const parameters = signature.getParameters();
  if (parameters.length > 1)
    return { ok: false, errors: [`${input.name} takes ${parameters.length} parameters; give it one input object, so it is called like a tool.`] };
  const shownParameters: string[] = [];
  for (const parameter of parameters) {
    const parameterType = checker.getTypeOfSymbolAtLocation(parameter, source);
    if (parameterType.flags & ts.TypeFlags.Any) return { ok: false, errors: [`The input of ${input.name} is typed any; declare its type.`] };
    shownParameters.push(`${parameter.name}: ${show(parameterType)}`);
  }
  const returned = signature.getReturnType();
  const awaited = checker.getAwaitedType(returned) ?? returned;
  if (returned.flags & ts.TypeFlags.Any || awaited.flags & ts.TypeFlags.Any)
    return { ok: false, errors: [`The output of ${input.name} is typed any; declare its type.`] };

  const imports: SkillImport[] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier) ? statement.moduleSpecifier.text : undefined;
    if (specifier === undefined) continue;
    const names: string[] = [];
    const bindings = ts.isImportDeclaration(statement) ? statement.importClause?.namedBindings : statement.exportClause;
    if (bindings && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings)))
      for (const element of bindings.elements) names.push((element.propertyName ?? element.name).text);
    imports.push({ specifier, names });
  }
  return { ok: true, signature: `${input.name}(${shownParameters.join(", ")}): ${show(returned)}`.slice(0, 1000), imports };
}
