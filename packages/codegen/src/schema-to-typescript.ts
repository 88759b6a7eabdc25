import { TypeModule } from "./schema/type-module";

export interface SchemaToTypeScriptOptions {
  /** The declared type's name; a valid TypeScript identifier. */
  name: string;
  /** Names the declarations must avoid (other declarations of the module they go into). */
  reservedNames?: readonly string[];
  /** Nesting depth after which a type becomes `unknown`. */
  maxDepth?: number;
}

/**
 * TypeScript declarations for a JSON Schema: `export interface <name>` (or `export type <name>`),
 * followed by a named type for each `$defs` / `definitions` entry it references.
 */
export function schemaToTypeScript(schema: unknown, options: SchemaToTypeScriptOptions): string {
  const module = new TypeModule({ reservedNames: options.reservedNames, maxDepth: options.maxDepth });
  module.declare(schema, { name: options.name });
  return module.source();
}
