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

const ROOT = "/codemux-skill/";

/**
 * The check itself, run inside the worker: the skill and its imports as one strict program in
 * memory; the skill must export a function named like it, taking at most one typed input and
 * returning a typed output (not `any`).
 */
export function checkSkill(ts: typeof TypeScript, input: SkillCheckInput, maxErrors: number): SkillCheckResult {
  const { program, skillFile } = skillProgram(ts, input);
  const errors = typeErrors(ts, program, skillFile);
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
  const signature = skillSignature(ts, checker, { name: input.name, exported, source });
  if (!signature.ok) return { ok: false, errors: [signature.error] };
  return { ok: true, signature: signature.text.slice(0, 1000), imports: skillImports(ts, source) };
}

/** The skill and its imports as one strict program in memory, beside the sandbox's globals; nothing else of the host's files but the compiler's lib typings. */
function skillProgram(ts: typeof TypeScript, input: SkillCheckInput): { program: TypeScript.Program; skillFile: string } {
  const globals = `${ROOT}globals.d.ts`;
  const files = new Map<string, string>(Object.entries(input.modules).map(([specifier, source]) => [`${ROOT}${specifier}.ts`, source]));
  const skillFile = `${ROOT}${input.specifier}.ts`;
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
    paths: { "mcp/*": [`${ROOT}mcp/*`] },
  };
  return { program: ts.createProgram([skillFile, globals], options, memoryHost(ts, files, options)), skillFile };
}

/** A compiler host over `files` alone, and the compiler's own lib typings: no path a skill names reaches the host's files. */
function memoryHost(ts: typeof TypeScript, files: Map<string, string>, options: TypeScript.CompilerOptions): TypeScript.CompilerHost {
  const libFile = ts.getDefaultLibFilePath(options);
  const libDir = libFile.slice(0, libFile.lastIndexOf("/") + 1);
  const isLib = (name: string) => name.startsWith(libDir) && /^lib(\.[a-z0-9]+)*\.d\.ts$/.test(name.slice(libDir.length));
  const read = (name: string) => files.get(name) ?? (isLib(name) ? ts.sys.readFile(name) : undefined);
  return {
    getSourceFile: (name, language) => {
      const text = read(name);
      return text === undefined ? undefined : ts.createSourceFile(name, text, language, true);
    },
    getDefaultLibFileName: () => libFile,
    getDefaultLibLocation: () => libDir.slice(0, -1),
    writeFile: () => undefined,
    getCurrentDirectory: () => ROOT.slice(0, -1),
    getCanonicalFileName: (name) => name,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => "\n",
    fileExists: (name) => files.has(name) || (isLib(name) && ts.sys.fileExists(name)),
    readFile: read,
    directoryExists: (name) => `${name}/`.startsWith(ROOT) || `${name}/` === libDir,
    getDirectories: () => [],
    realpath: (name) => name,
  };
}

/** The program's errors, each with where it is (the skill's line and column, or an imported module's line). */
function typeErrors(ts: typeof TypeScript, program: TypeScript.Program, skillFile: string): string[] {
  const where = (file: TypeScript.SourceFile | undefined, start: number | undefined): string => {
    if (!file || start === undefined) return "";
    const { line, character } = file.getLineAndCharacterOfPosition(start);
    return file.fileName === skillFile ? `line ${line + 1}, column ${character + 1}: ` : `${file.fileName.slice(ROOT.length)} line ${line + 1}: `;
  };
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.category === ts.DiagnosticCategory.Error)
    .map((d) => `${where(d.file, d.start)}${ts.flattenDiagnosticMessageText(d.messageText, " ").slice(0, 500)}`);
}

/** The exported function's signature as shown to the model: one function, at most one typed input, a typed output; else why not. */
function skillSignature(
  ts: typeof TypeScript,
  checker: TypeScript.TypeChecker,
  { name, exported, source }: { name: string; exported: TypeScript.Symbol; source: TypeScript.SourceFile },
): { ok: true; text: string } | { ok: false; error: string } {
  const type = checker.getTypeOfSymbolAtLocation(exported, source);
  const [signature, ...overloads] = type.getCallSignatures();
  if (!signature || overloads.length) return { ok: false, error: `${name} must be one function (not ${signature ? "overloaded" : "a value"}).` };
  const show = (t: TypeScript.Type) =>
    checker.typeToString(t, undefined, ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType);
  const parameters = signature.getParameters();
  if (parameters.length > 1)
    return { ok: false, error: `${name} takes ${parameters.length} parameters; give it one input object, so it is called like a tool.` };
  const shownParameters: string[] = [];
  for (const parameter of parameters) {
    const parameterType = checker.getTypeOfSymbolAtLocation(parameter, source);
    if (parameterType.flags & ts.TypeFlags.Any) return { ok: false, error: `The input of ${name} is typed any; declare its type.` };
    shownParameters.push(`${parameter.name}: ${show(parameterType)}`);
  }
  const returned = signature.getReturnType();
  const awaited = checker.getAwaitedType(returned) ?? returned;
  if (returned.flags & ts.TypeFlags.Any || awaited.flags & ts.TypeFlags.Any)
    return { ok: false, error: `The output of ${name} is typed any; declare its type.` };
  return { ok: true, text: `${name}(${shownParameters.join(", ")}): ${show(returned)}` };
}

/** What the skill imports (and re-exports): each module with the names it takes. */
function skillImports(ts: typeof TypeScript, source: TypeScript.SourceFile): SkillImport[] {
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
  return imports;
}
