import { jsDoc } from "../jsdoc";
import { propertyKey, stringLiteral, typeNameFromKey } from "../names";
import { parseLocalRef, resolvePointer } from "./json-pointer";
import { schemaDocLines } from "./schema-docs";
import { atom, intersection, NEVER, NULL, union, UNKNOWN, wrap, type TsType } from "./ts-type";

type SchemaObject = Record<string, unknown>;

/** Nesting beyond this (or a reference cycle that cannot become a named type) is typed `unknown`. */
const DEFAULT_MAX_DEPTH = 24;

/** Schema nodes rendered per declaration before the rest become `unknown`; bounds a hostile fan-out of references. */
const MAX_NODES = 20_000;

/** Global types the emitted code relies on; a `$defs` entry must not shadow them. */
const GLOBAL_TYPE_NAMES = ["Array", "Boolean", "Date", "Error", "Function", "Number", "Object", "Promise", "Record", "String", "Symbol"];

export interface TypeModuleOptions {
  /** Names already used in the module, which declarations must not take. */
  reservedNames?: Iterable<string>;
  maxDepth?: number;
}

export interface DeclareOptions {
  name: string;
  /** What an unconstrained schema becomes: `unknown`, or `Record<string, unknown>` where an object is known. */
  empty?: "unknown" | "record";
}

/** The `$defs` / `definitions` and `#` references of one root schema. */
interface RootScope {
  root: unknown;
  rootName: string;
  defNames: Map<string, string>;
  pending: { name: string; schema: unknown }[];
  inlineRefs: string[];
}

/**
 * Type declarations for one module. Entries of `$defs` / `definitions` become named types declared after
 * the type that first needs them, so a shared or recursive definition is written once.
 */
export class TypeModule {
  private readonly taken: Set<string>;
  private readonly maxDepth: number;
  private readonly declarations: string[] = [];
  private budget = MAX_NODES;

  constructor(options: TypeModuleOptions = {}) {
    this.taken = new Set([...GLOBAL_TYPE_NAMES, ...(options.reservedNames ?? [])]);
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  }

  /** Declares `options.name` (which the caller has reserved or which must be free) and the definitions it uses. */
  declare(schema: unknown, options: DeclareOptions): void {
    this.taken.add(options.name);
    this.budget = MAX_NODES;
    const scope: RootScope = { root: schema, rootName: options.name, defNames: new Map(), pending: [], inlineRefs: [] };
    this.declareOne(options.name, schema, scope, schemaDocLines(schema), options.empty ?? "unknown");
    for (let next = scope.pending.shift(); next !== undefined; next = scope.pending.shift()) {
      this.declareOne(next.name, next.schema, scope, schemaDocLines(next.schema), "unknown");
    }
  }

  source(): string {
    return this.declarations.join("\n");
  }

  private declareOne(name: string, schema: unknown, scope: RootScope, doc: readonly string[], empty: "unknown" | "record"): void {
    const head = jsDoc(doc);
    if (isPlainObjectSchema(schema)) {
      this.declarations.push(`${head}export interface ${name} ${this.objectType(schema, scope, 0, "").text}\n`);
      return;
    }
    let type = this.render(schema, scope, 0, "");
    if (type.text === UNKNOWN.text && empty === "record") type = atom("Record<string, unknown>");
    this.declarations.push(`${head}export type ${name} = ${type.text};\n`);
  }

  private allocate(base: string): string {
    let name = base;
    for (let n = 2; this.taken.has(name); n++) name = `${base}${n}`;
    this.taken.add(name);
    return name;
  }

  private render(schema: unknown, scope: RootScope, depth: number, indent: string): TsType {
    if (schema === true) return UNKNOWN;
    if (schema === false) return NEVER;
    if (!isSchemaObject(schema) || depth > this.maxDepth || --this.budget < 0) return UNKNOWN;
    if (typeof schema.$ref === "string") return this.reference(schema.$ref, scope, depth, indent);
    const parts: TsType[] = [];
    const base = this.baseType(schema, scope, depth, indent);
    if (base !== undefined) parts.push(base);
    for (const key of ["anyOf", "oneOf"]) {
      const options = schema[key];
      if (Array.isArray(options) && options.length > 0) {
        parts.push(union(options.map((option) => this.render(option, scope, depth + 1, indent))));
      }
    }
    if (Array.isArray(schema.allOf)) {
      parts.push(...schema.allOf.map((member) => this.render(member, scope, depth + 1, indent)));
    }
    const type = intersection(parts);
    return schema.nullable === true ? union([type, NULL]) : type;
  }

  private reference(ref: string, scope: RootScope, depth: number, indent: string): TsType {
    const segments = parseLocalRef(ref);
    if (segments === undefined) return UNKNOWN;
    if (segments.length === 0) return atom(scope.rootName);
    const target = resolvePointer(scope.root, segments);
    if (target === undefined) return UNKNOWN;
    const key = segments.join("/");
    const [container, defName] = segments;
    if (segments.length === 2 && (container === "$defs" || container === "definitions") && defName !== undefined) {
      let name = scope.defNames.get(key);
      if (name === undefined) {
        name = this.allocate(typeNameFromKey(defName));
        scope.defNames.set(key, name);
        scope.pending.push({ name, schema: target });
      }
      return atom(name);
    }
    // Other pointers (such as `#/properties/x`) are written inline; a cycle through them has no name to stop at.
    if (scope.inlineRefs.includes(key)) return UNKNOWN;
    scope.inlineRefs.push(key);
    try {
      return this.render(target, scope, depth + 1, indent);
    } finally {
      scope.inlineRefs.pop();
    }
  }

  /** The type from `const`, `enum` and `type` (or the keywords that imply one), if the schema says any. */
  private baseType(schema: SchemaObject, scope: RootScope, depth: number, indent: string): TsType | undefined {
    if (schema.const !== undefined) return literal(schema.const);
    if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
    const declared = typeof schema.type === "string" ? [schema.type] : Array.isArray(schema.type) ? schema.type : undefined;
    const types = declared ?? (isObjectLike(schema) ? ["object"] : isArrayLike(schema) ? ["array"] : []);
    if (types.length === 0) return undefined;
    return union(
      types.map((type): TsType => {
        switch (type) {
          case "string":
            return atom("string");
          case "number":
          case "integer":
            return atom("number");
          case "boolean":
            return atom("boolean");
          case "null":
            return NULL;
          case "object":
            return this.objectType(schema, scope, depth, indent);
          case "array":
            return this.arrayType(schema, scope, depth, indent);
          default:
            return UNKNOWN;
        }
      }),
    );
  }

  private objectType(schema: SchemaObject, scope: RootScope, depth: number, indent: string): TsType {
    const properties = isSchemaObject(schema.properties) ? Object.entries(schema.properties) : [];
    const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : []);
    const inner = `${indent}  `;
    const extra: TsType[] = [];
    const additional = schema.additionalProperties;
    if (additional === true || isSchemaObject(additional)) extra.push(this.render(additional, scope, depth + 1, inner));
    if (isSchemaObject(schema.patternProperties)) {
      for (const value of Object.values(schema.patternProperties)) extra.push(this.render(value, scope, depth + 1, inner));
    }
    if (properties.length === 0) {
      if (extra.length > 0) return atom(`Record<string, ${union(extra).text}>`);
      return atom(additional === false ? "Record<string, never>" : "Record<string, unknown>");
    }
    let body = "";
    for (const [key, value] of properties) {
      const type = this.render(value, scope, depth + 1, inner);
      const optional = required.has(key) ? "" : "?";
      body += `${jsDoc(schemaDocLines(value), inner)}${inner}${propertyKey(key)}${optional}: ${type.text};\n`;
    }
    // A typed index signature would have to admit every named property's type too; `unknown` always does.
    if (extra.length > 0) body += `${inner}[key: string]: unknown;\n`;
    return atom(`{\n${body}${indent}}`);
  }

  private arrayType(schema: SchemaObject, scope: RootScope, depth: number, indent: string): TsType {
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : undefined;
    if (prefix === undefined) {
      const items = schema.items === undefined ? UNKNOWN : this.render(schema.items, scope, depth + 1, indent);
      return atom(`${wrap(items, 2)}[]`);
    }
    const minItems = typeof schema.minItems === "number" ? schema.minItems : 0;
    const elements = prefix.map((item, index) => {
      const type = this.render(item, scope, depth + 1, indent);
      return index < minItems ? type.text : `${wrap(type, 2)}?`;
    });
    const rest = Array.isArray(schema.prefixItems) ? schema.items : schema.additionalItems;
    const closed = rest === false || (typeof schema.maxItems === "number" && schema.maxItems <= prefix.length);
    if (!closed) {
      const restType = rest === undefined || rest === true ? UNKNOWN : this.render(rest, scope, depth + 1, indent);
      elements.push(`...${wrap(restType, 2)}[]`);
    }
    return atom(`[${elements.join(", ")}]`);
  }
}

function literal(value: unknown): TsType {
  if (typeof value === "string") return atom(stringLiteral(value));
  // A negative literal is parenthesised before `[]`, as `(-1)[]`.
  if (typeof value === "number" && Number.isFinite(value)) return { text: String(value), precedence: value < 0 ? 1 : 2 };
  if (typeof value === "boolean") return atom(String(value));
  if (value === null) return NULL;
  return UNKNOWN;
}

function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isObjectLike(schema: SchemaObject): boolean {
  return schema.properties !== undefined || schema.additionalProperties !== undefined || schema.patternProperties !== undefined;
}

function isArrayLike(schema: SchemaObject): boolean {
  return schema.items !== undefined || schema.prefixItems !== undefined;
}

/** A schema that is exactly an object with named properties, which reads best as an interface. */
function isPlainObjectSchema(schema: unknown): schema is SchemaObject {
  if (!isSchemaObject(schema)) return false;
  const combined = ["$ref", "anyOf", "oneOf", "allOf", "const", "enum"].some((key) => schema[key] !== undefined);
  const objectTyped = schema.type === "object" || (schema.type === undefined && isObjectLike(schema));
  const hasProperties = isSchemaObject(schema.properties) && Object.keys(schema.properties).length > 0;
  return !combined && objectTyped && hasProperties && schema.nullable !== true;
}
