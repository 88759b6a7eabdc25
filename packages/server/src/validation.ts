import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Script, createContext } from "node:vm";
import { MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_VALUES, MAX_VALIDATED_STRING_CHARS } from "./defaults";
import { InvalidArgumentsError } from "./errors";

/** One schema `pattern` test may run this long: a downstream schema's pattern is not ours to trust. */
const PATTERN_TIMEOUT_MS = 50;

/**
 * Validates tool arguments against the tool's JSON Schema on the host, before the call, for every
 * origin. ajv handles every schema of the 22 real catalogs and generates code safely from untrusted
 * schemas; zod would cost 12-75 ms to load inside each fresh QuickJS runtime (measured), so the
 * sandbox does not validate. Arguments and schemas are both untrusted: the size and depth of the
 * arguments are checked first, validation stops at the first error, and schema patterns run under a
 * time limit in a vm context (a catastrophic pattern cannot hold the event loop).
 */
export class ArgumentValidator {
  readonly #ajv = new Ajv({
    strict: false,
    allErrors: false,
    validateFormats: false,
    validateSchema: false,
    addUsedSchema: false,
    code: { regExp: boundedRegExp },
  });
  readonly #compiled = new WeakMap<object, ValidateFunction | null>();

  /** Throws InvalidArgumentsError naming the first bad field; a schema ajv cannot compile is not enforced. */
  validate(toolName: string, schema: object | undefined, args: unknown): void {
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      throw new InvalidArgumentsError(toolName, [`expected an object of named arguments, got ${describe(args)}`]);
    }
    const tooLarge = sizeProblem(args);
    if (tooLarge) throw new InvalidArgumentsError(toolName, [tooLarge]);
    if (!schema) return;
    const validate = this.#compile(schema);
    if (!validate) return;
    let valid: boolean;
    try {
      valid = validate(args) as boolean;
    } catch (error) {
      if (error instanceof PatternTimeoutError) throw new InvalidArgumentsError(toolName, [error.message]);
      throw error;
    }
    if (!valid) throw new InvalidArgumentsError(toolName, formatErrors(validate.errors ?? []));
  }

  #compile(schema: object): ValidateFunction | null {
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
}

/** One linear walk, stopping early: depth, number of values and string lengths within bounds. */
function sizeProblem(args: object): string | undefined {
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
  return undefined;
}

class PatternTimeoutError extends Error {}

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
      Object.assign(patternContext, { pattern, flags, text });
      try {
        return patternTest.runInContext(patternContext, { timeout: PATTERN_TIMEOUT_MS }) as boolean;
      } catch (error) {
        if ((error as { code?: string }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT") {
          throw new PatternTimeoutError(
            `a value took longer than ${PATTERN_TIMEOUT_MS} ms to match the tool's pattern /${pattern.slice(0, 80)}/; send a shorter or simpler value`,
          );
        }
        throw error;
      } finally {
        patternContext.text = "";
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
  return [...new Set(messages)].slice(0, 8);
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
