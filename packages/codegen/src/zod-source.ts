import { jsonSchemaToZod, parseSchema, type JsonSchema, type JsonSchemaObject, type Refs } from "json-schema-to-zod";
import { parseLocalRef, resolvePointer } from "./schema/json-pointer";

/** More schema nodes than this while inlining references (a hostile fan-out) become `{}` (any value). */
const MAX_INLINED_NODES = 20_000;

/**
 * Source of a zod 4 schema expression (`z.object({...})`) for a JSON Schema, via json-schema-to-zod.
 * Defaults are left out: the schema validates arguments, and the server applies its own defaults.
 */
export function generateZodSource(schema: unknown): string {
  return jsonSchemaToZod(prepare(schema) as JsonSchema, { zodVersion: 4, withoutDefaults: true, parserOverride: protoSafeObject });
}

type Node = Record<string, unknown>;

const NUMBER_KEYWORDS = ["minimum", "maximum", "multipleOf", "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"];
const SCHEMA_KEYWORDS = ["additionalProperties", "additionalItems", "not", "if", "then", "else"];
const SCHEMA_LIST_KEYWORDS = ["anyOf", "oneOf", "allOf"];

/**
 * A copy of the schema that json-schema-to-zod turns into code that compiles and loads: local `$ref`s
 * inlined (it does not follow them; a reference back into itself becomes `{}`, any value), `prefixItems`
 * as draft-7 tuples, and only well-typed keywords kept, since it pastes some values into code as they are
 * (a `discriminator` name, a `pattern` that must be a valid RegExp when the module loads).
 */
function prepare(root: unknown): unknown {
  let budget = MAX_INLINED_NODES;
  const resolving: unknown[] = [];
  const visit = (node: unknown): unknown => {
    if (typeof node === "boolean") return node;
    if (typeof node !== "object" || node === null || Array.isArray(node) || --budget < 0) return {};
    const schema = node as Node;
    if (typeof schema.$ref === "string") {
      const segments = parseLocalRef(schema.$ref);
      const target = segments === undefined ? undefined : resolvePointer(root, segments);
      if (target === undefined || resolving.includes(target)) return {};
      resolving.push(target);
      try {
        return visit(target);
      } finally {
        resolving.pop();
      }
    }
    const out: Node = {};
    if (typeof schema.type === "string") out.type = schema.type;
    if (Array.isArray(schema.type)) out.type = schema.type.filter((t) => typeof t === "string");
    if (typeof schema.description === "string") out.description = schema.description;
    if (typeof schema.format === "string") out.format = schema.format;
    if (typeof schema.pattern === "string" && isRegExp(schema.pattern)) out.pattern = schema.pattern;
    for (const key of ["nullable", "uniqueItems"]) if (typeof schema[key] === "boolean") out[key] = schema[key];
    for (const key of NUMBER_KEYWORDS) if (isFiniteNumber(schema[key])) out[key] = schema[key];
    for (const key of ["exclusiveMinimum", "exclusiveMaximum"]) {
      if (isFiniteNumber(schema[key]) || typeof schema[key] === "boolean") out[key] = schema[key];
    }
    if (schema.const !== undefined) out.const = schema.const;
    if (Array.isArray(schema.enum)) out.enum = schema.enum;
    if (Array.isArray(schema.required)) out.required = schema.required.filter((r) => typeof r === "string");
    if (isNode(schema.properties)) out.properties = mapValues(schema.properties, visit);
    if (isNode(schema.patternProperties)) {
      out.patternProperties = mapValues(schema.patternProperties, visit, isRegExp);
    }
    for (const key of SCHEMA_KEYWORDS) if (schema[key] !== undefined) out[key] = visit(schema[key]);
    for (const key of SCHEMA_LIST_KEYWORDS) if (Array.isArray(schema[key])) out[key] = (schema[key] as unknown[]).map(visit);
    if (Array.isArray(schema.prefixItems)) {
      out.items = schema.prefixItems.map(visit);
      if (schema.items !== undefined) out.additionalItems = visit(schema.items);
    } else if (Array.isArray(schema.items)) {
      out.items = schema.items.map(visit);
    } else if (schema.items !== undefined) {
      out.items = visit(schema.items);
    }
    return out;
  };
  return visit(root);
}

/** An object literal `{ "__proto__": x }` sets the prototype instead of a key; zod needs a computed key there. */
function protoSafeObject(schema: JsonSchemaObject, refs: Refs): string | undefined {
  const properties = schema.properties;
  if (properties === undefined || !Object.prototype.hasOwnProperty.call(properties, "__proto__")) return undefined;
  const placeholder = `__proto_${globalThis.crypto.randomUUID()}`;
  const renamed = mapValues(
    properties,
    (value) => value,
    undefined,
    (key) => (key === "__proto__" ? placeholder : key),
  );
  const required = Array.isArray(schema.required) ? schema.required.map((key) => (key === "__proto__" ? placeholder : key)) : schema.required;
  return parseSchema({ ...schema, properties: renamed as Record<string, JsonSchema>, required }, refs).replace(
    `${JSON.stringify(placeholder)}:`,
    `["__proto__"]:`,
  );
}

/** Maps an object's own entries into a new object whose keys (`__proto__` included) are own properties. */
function mapValues(
  source: object,
  map: (value: unknown) => unknown,
  keep: (key: string) => boolean = () => true,
  rename: (key: string) => string = (key) => key,
): Node {
  const target: Node = {};
  for (const [key, value] of Object.entries(source)) {
    if (keep(key)) Object.defineProperty(target, rename(key), { value: map(value), enumerable: true, writable: true, configurable: true });
  }
  return target;
}

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

function isRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}
