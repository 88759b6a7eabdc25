import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Script, createContext } from "node:vm";
import { MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_VALUES, MAX_VALIDATED_STRING_CHARS } from "./defaults";
import { InvalidArgumentsError } from "./errors";

/** One schema `pattern` test may run this long: a downstream schema's pattern is not ours to trust. */
const PATTERN_TIMEOUT_MS = 50;
/** All the pattern tests of one validation together may run this long. */
const PATTERN_BUDGET_MS = 250;
/** Tries of one value against one pattern before it is refused as too slow (see `boundedRegExp`). */
const PATTERN_TRIES = 2;
/** A failed validation is run again for every problem only while values × schema nodes stay under this: each problem found is an object kept. */
const MAX_ALL_ERRORS_WORK = 200_000;
/** Problems named in one answer; the rest are counted. */
const MAX_PROBLEMS = 10;

/**
 * Validates tool arguments against the tool's JSON Schema on the host, before the call, for every
 * origin. ajv handles every schema of the 22 real catalogs and generates code safely from untrusted
 * schemas; zod would cost 12-75 ms to load inside each fresh QuickJS runtime (measured), so the
 * sandbox does not validate. Arguments and schemas are both untrusted: the size and depth of the
 * arguments are checked first, validation stops at the first error, and schema patterns run under a
 * time limit in a vm context (a catastrophic pattern cannot hold the event loop). Only arguments
 * that failed are validated again for all their problems, when they and the schema are small.
 */
export class ArgumentValidator {
  readonly #first = new SchemaCompiler(false);
  readonly #all = new SchemaCompiler(true);
  readonly #patternBudgetMs: number;

  /** `patternBudgetMs`: how long all the pattern tests of one validation may run together (default 250). */
  constructor(options: { patternBudgetMs?: number } = {}) {
    this.#patternBudgetMs = options.patternBudgetMs ?? PATTERN_BUDGET_MS;
  }

  /** Throws InvalidArgumentsError naming the bad fields (the first ten); a schema ajv cannot compile is not enforced. */
  validate(toolName: string, schema: object | undefined, args: unknown): void {
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      throw new InvalidArgumentsError(toolName, [`expected an object of named arguments, got ${describe(args)}`]);
    }
    const size = argumentSize(args);
    if (typeof size === "string") throw new InvalidArgumentsError(toolName, [size]);
    if (!schema) return;
    const validate = this.#first.compile(schema);
    if (!validate) return;
    // The clock starts at the first pattern test: a schema without patterns pays nothing for the budget.
    patternBudget.until = Number.NaN;
    patternBudget.ms = this.#patternBudgetMs;
    if (run(toolName, validate, args)) return;
    const all = size * this.#first.nodes(schema) <= MAX_ALL_ERRORS_WORK ? this.#all.compile(schema) : null;
    const errors = all && !run(toolName, all, args) ? all.errors : validate.errors;
    throw new InvalidArgumentsError(toolName, formatErrors(errors ?? []));
  }
}

/**
 * The arguments without each top-level `null` the schema does not allow there, for a property it does not require:
 * a client that writes `null` for "not given" (as the conformance referee's does) means it omitted.
 * The same object when nothing is dropped.
 */
export function omitNulls(schema: object | undefined, args: Record<string, unknown>): Record<string, unknown> {
  const { properties, required } = (schema ?? {}) as { properties?: unknown; required?: unknown };
  if (typeof properties !== "object" || properties === null || typeof args !== "object" || args === null || Array.isArray(args)) return args;
  let out: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(args)) {
    if (value !== null || (Array.isArray(required) && required.includes(key))) continue;
    const property = (properties as Record<string, unknown>)[key];
    if (property === undefined || allowsNull(property)) continue;
    out ??= { ...args };
    delete out[key];
  }
  return out ?? args;
}

/** Whether a property's schema may hold `null` (a type naming it, a union, an enum or const that holds it); an unread schema is taken to allow it. */
function allowsNull(property: unknown): boolean {
  if (typeof property !== "object" || property === null) return true;
  const { type, enum: values, const: constant, anyOf, oneOf } = property as Record<string, unknown>;
  if (anyOf !== undefined || oneOf !== undefined || constant === null) return true;
  if (Array.isArray(values)) return values.includes(null);
  if (typeof type === "string") return type === "null";
  if (Array.isArray(type)) return type.includes("null");
  return true;
}

/** Runs one compiled schema; a pattern out of time is the caller's problem to fix, said so. */
function run(toolName: string, validate: ValidateFunction, args: object): boolean {
  try {
    return validate(args) as boolean;
  } catch (error) {
    if (error instanceof PatternTimeoutError) throw new InvalidArgumentsError(toolName, [error.message]);
    throw error;
  }
}

/** Compiles each schema once (stopping at its first error, or collecting all), and counts its nodes. */
class SchemaCompiler {
  readonly #ajv: Ajv;
  readonly #compiled = new WeakMap<object, ValidateFunction | null>();
  readonly #nodes = new WeakMap<object, number>();

  constructor(allErrors: boolean) {
    this.#ajv = new Ajv({ strict: false, allErrors, validateFormats: false, validateSchema: false, addUsedSchema: false, code: { regExp: boundedRegExp } });
  }

  compile(schema: object): ValidateFunction | null {
    if (!this.#compiled.has(schema)) {
      let compiled: ValidateFunction | null;
      try {
        compiled = this.#ajv.compile(schema);
      } catch {
        compiled = null;
      }
      this.#compiled.set(schema, compiled);
    }
    return this.#compiled.get(schema) ?? null;
  }

  /** Objects and arrays in the schema, counted up to MAX_ALL_ERRORS_WORK + 1. */
  nodes(schema: object): number {
    let count = this.#nodes.get(schema);
    if (count === undefined) {
      count = 0;
      const stack: unknown[] = [schema];
      while (stack.length > 0 && count <= MAX_ALL_ERRORS_WORK) {
        const node = stack.pop();
        if (typeof node !== "object" || node === null) continue;
        count++;
        for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push(child);
      }
      this.#nodes.set(schema, count);
    }
    return count;
  }
}

/** One linear walk, stopping early: the number of values, or why the arguments are too large (depth, count, a string's length). */
function argumentSize(args: object): number | string {
  let values = 0;
  // Two parallel stacks, so the walk allocates no pair per value.
  const stack: unknown[] = [args];
  const depths: number[] = [0];
  while (stack.length > 0) {
    const value = stack.pop();
    const depth = depths.pop() as number;
    if (++values > MAX_ARGUMENT_VALUES)
      return `more than ${MAX_ARGUMENT_VALUES.toLocaleString("en-US")} values in all; pass large data through a file or a kept result`;
    if (typeof value === "string" && value.length > MAX_VALIDATED_STRING_CHARS)
      return `a string of ${value.length.toLocaleString("en-US")} characters is over the ${MAX_VALIDATED_STRING_CHARS.toLocaleString("en-US")}-character limit`;
    if (typeof value !== "object" || value === null) continue;
    if (depth >= MAX_ARGUMENT_DEPTH) return `nested deeper than ${MAX_ARGUMENT_DEPTH} levels`;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      stack.push(child);
      depths.push(depth + 1);
    }
  }
  return values;
}

class PatternTimeoutError extends Error {}

/** When the pattern tests of the validation running now must be done (performance.now() time; NaN until its first test). */
const patternBudget = { until: Number.NaN, ms: PATTERN_BUDGET_MS };

const patternContext = createContext({ patterns: new Map<string, RegExp>(), pattern: "", flags: "", text: "" });
const patternTest = new Script(
  "{ let re = patterns.get(pattern + '/' + flags); if (!re) { re = new RegExp(pattern, flags); patterns.set(pattern + '/' + flags, re); } re.test(text); }",
);

/** ajv's regular expressions, each test run under a time limit (vm can interrupt a regular expression; the main loop cannot). */
function boundedRegExp(pattern: string, flags: string): { test: (text: string) => boolean; toString: () => string } {
  new RegExp(pattern, flags);
  return {
    // ajv keys its compiled patterns by this.
    toString: () => `/${pattern}/${flags}`,
    test(text: string): boolean {
      const overBudget = () =>
        new PatternTimeoutError(
          `the values took longer than ${patternBudget.ms} ms in all to match the tool's patterns; send fewer, shorter or simpler values`,
        );
      // The limit is wall-clock time: a process stalled during a test (a loaded machine, a paused container) runs
      // out of it with a harmless value. One more try tells the two apart, a truly slow value being slow again; both
      // tries count against the validation's budget.
      for (let attempt = 1; ; attempt++) {
        const now = performance.now();
        if (Number.isNaN(patternBudget.until)) patternBudget.until = now + patternBudget.ms;
        const left = patternBudget.until - now;
        if (left <= 0) throw overBudget();
        Object.assign(patternContext, { pattern, flags, text });
        try {
          return patternTest.runInContext(patternContext, { timeout: Math.ceil(Math.min(PATTERN_TIMEOUT_MS, left)) }) as boolean;
        } catch (error) {
          if ((error as { code?: string }).code !== "ERR_SCRIPT_EXECUTION_TIMEOUT") throw error;
          if (left < PATTERN_TIMEOUT_MS) throw overBudget();
          if (attempt < PATTERN_TRIES) continue;
          throw new PatternTimeoutError(
            `a value took longer than ${PATTERN_TIMEOUT_MS} ms to match the tool's pattern /${pattern.slice(0, 80)}/; send a shorter or simpler value`,
          );
        } finally {
          patternContext.text = "";
        }
      }
    },
  };
}
// Anything but "new RegExp", so ajv calls this function and not the native constructor.
boundedRegExp.code = "boundedRegExp";

function formatErrors(errors: ErrorObject[]): string[] {
  const messages = errors
    // anyOf/oneOf report every branch; the branch errors above them say more.
    .filter((e) => !["anyOf", "oneOf", "if"].includes(e.keyword) || errors.length === 1)
    .map((e) => {
      if (e.keyword === "required") return `${join(e.instancePath, (e.params as { missingProperty: string }).missingProperty)}: required`;
      if (e.keyword === "additionalProperties")
        return `${join(e.instancePath, (e.params as { additionalProperty: string }).additionalProperty)}: not an accepted argument`;
      if (e.keyword === "enum")
        return `${field(e.instancePath)}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues
          .slice(0, 20)
          .map((v) => JSON.stringify(v))
          .join(", ")}`;
      return `${field(e.instancePath)}: ${e.message ?? "is invalid"}`;
    });
  const problems = [...new Set(messages)];
  if (problems.length <= MAX_PROBLEMS) return problems;
  return [...problems.slice(0, MAX_PROBLEMS), `and ${problems.length - MAX_PROBLEMS} more`];
}

function field(pointer: string): string {
  return pointer
    ? pointer
        .slice(1)
        .split("/")
        .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
        .join(".")
    : "(arguments)";
}

function join(pointer: string, name: string): string {
  return pointer ? `${field(pointer)}.${name}` : name;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? "a string" : typeof value;
}
