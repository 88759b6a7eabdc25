import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { InvalidArgumentsError } from "./errors";

/**
 * Validates tool arguments against the tool's JSON Schema on the host, before the call, for
 * call_tool and execute_code alike. ajv handles every schema of the 22 real catalogs and
 * generates code safely from untrusted schemas; zod would cost 12-75 ms to load inside each
 * fresh QuickJS runtime (measured), so the sandbox does not validate.
 */
export class ArgumentValidator {
  readonly #ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, validateSchema: false, addUsedSchema: false });
  readonly #compiled = new WeakMap<object, ValidateFunction | null>();

  /** Throws InvalidArgumentsError naming each bad field; a schema ajv cannot compile is not enforced. */
  validate(toolName: string, schema: object | undefined, args: unknown): void {
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      throw new InvalidArgumentsError(toolName, [`expected an object of named arguments, got ${describe(args)}`]);
    }
    if (!schema) return;
    const validate = this.#compile(schema);
    if (!validate || validate(args)) return;
    throw new InvalidArgumentsError(toolName, formatErrors(validate.errors ?? []));
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

function formatErrors(errors: ErrorObject[]): string[] {
  const messages = errors
    // anyOf/oneOf report every branch; the branch errors above them say more.
    .filter((e) => !["anyOf", "oneOf", "if"].includes(e.keyword) || errors.length === 1)
    .map((e) => {
      if (e.keyword === "required") return `${join(e.instancePath, (e.params as { missingProperty: string }).missingProperty)}: required`;
      if (e.keyword === "additionalProperties") return `${join(e.instancePath, (e.params as { additionalProperty: string }).additionalProperty)}: not an accepted argument`;
      if (e.keyword === "enum") return `${field(e.instancePath)}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")}`;
      return `${field(e.instancePath)}: ${e.message ?? "is invalid"}`;
    });
  return [...new Set(messages)].slice(0, 8);
}

function field(pointer: string): string {
  return pointer ? pointer.slice(1).split("/").map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~")).join(".") : "(arguments)";
}

function join(pointer: string, name: string): string {
  return pointer ? `${field(pointer)}.${name}` : name;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? "a string" : typeof value;
}
