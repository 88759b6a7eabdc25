import { closestNames } from "@codemux/core";
import { BadRequestError } from "../errors";

/** The JSON Schema subset meta-tools declare their inputs with. */
export interface InputProperty {
  type?: "string" | "integer" | "number" | "boolean" | "object" | "array";
  description?: string;
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  maxItems?: number;
  items?: InputProperty;
  default?: unknown;
  /** Accepted on input but not shown in the tool list (an alias kept for older callers). */
  unlisted?: boolean;
}

export interface InputSchema {
  type: "object";
  properties: Record<string, InputProperty>;
  required?: readonly string[];
}

/**
 * Reads a meta-tool's arguments by its own declared schema, so bounds and defaults live in one
 * place (the definition the model sees): defaults filled in, types checked with a sentence for each
 * wrong one, numbers and booleans sent as strings accepted, and an object sent as a JSON string
 * (some clients can only send strings) parsed. Properties the schema does not name are ignored
 * here; checkFields refuses them.
 */
export function readInput(schema: InputSchema, args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    if (args[name] === undefined || args[name] === null) throw new BadRequestError(`"${name}" is required.`);
  }
  for (const [name, property] of Object.entries(schema.properties)) {
    const value = args[name];
    if (value === undefined || value === null) {
      if (property.default !== undefined) out[name] = property.default;
      continue;
    }
    out[name] = readValue(name, property, value);
  }
  return out;
}

/** Refuses the first field the schema does not name, with the closest one it does: a misnamed field is never silently dropped. */
export function checkFields(tool: string, schema: InputSchema, args: Record<string, unknown>): void {
  for (const field in args) {
    if (Object.hasOwn(schema.properties, field) || args[field] === undefined) continue;
    const close = closestNames(field.slice(0, 100), Object.keys(schema.properties), 1);
    const listed = Object.keys(schema.properties).filter((name) => !schema.properties[name]?.unlisted);
    throw new BadRequestError(
      `${tool} takes no field "${field.slice(0, 100)}"${close.length ? ` (did you mean "${close[0]}"?)` : ""}; it takes ${listed.join(", ")}.`,
    );
  }
}

function readValue(name: string, property: InputProperty, value: unknown): unknown {
  switch (property.type) {
    case "string": {
      if (typeof value !== "string") throw new BadRequestError(`"${name}" must be a string, not ${kind(value)}.`);
      if (property.maxLength !== undefined && value.length > property.maxLength) {
        throw new BadRequestError(`"${name}" is ${value.length} characters long; it may have at most ${property.maxLength}.`);
      }
      if (property.enum && !property.enum.includes(value))
        throw new BadRequestError(`"${name}" must be one of ${property.enum.map((v) => `"${v}"`).join(", ")}.`);
      return value;
    }
    case "integer":
    case "number": {
      const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
      if (typeof n !== "number" || !Number.isFinite(n) || (property.type === "integer" && !Number.isInteger(n))) {
        throw new BadRequestError(`"${name}" must be ${property.type === "integer" ? "an integer" : "a number"}.`);
      }
      const min = property.minimum ?? Number.NEGATIVE_INFINITY;
      const max = property.maximum ?? Number.POSITIVE_INFINITY;
      if (n < min || n > max) {
        throw new BadRequestError(max === Number.POSITIVE_INFINITY ? `"${name}" must be at least ${min}.` : `"${name}" must be between ${min} and ${max}.`);
      }
      return n;
    }
    case "boolean": {
      if (value === "true" || value === "false") return value === "true";
      if (typeof value !== "boolean") throw new BadRequestError(`"${name}" must be true or false.`);
      return value;
    }
    case "object": {
      const parsed = typeof value === "string" ? parseJson(name, value) : value;
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
        throw new BadRequestError(`"${name}" must be an object of named values, not ${kind(parsed)}.`);
      return parsed;
    }
    case "array": {
      const list = typeof value === "string" ? [value] : value;
      if (!Array.isArray(list)) throw new BadRequestError(`"${name}" must be a list, not ${kind(value)}.`);
      if (property.maxItems !== undefined && list.length > property.maxItems)
        throw new BadRequestError(`"${name}" may have at most ${property.maxItems} items.`);
      return property.items ? list.map((item, i) => readValue(`${name}[${i}]`, property.items as InputProperty, item)) : list;
    }
    default:
      return value;
  }
}

function parseJson(name: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`"${name}" is not valid JSON: ${(error as Error).message.slice(0, 200)}`);
  }
}

function kind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : typeof value;
}
