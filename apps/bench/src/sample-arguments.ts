type Schema = Record<string, unknown>;

/** The smallest arguments a schema accepts (required fields only), to call every tool of a catalog once. */
export function sampleArguments(schema: unknown, root: unknown = schema, depth = 0): Record<string, unknown> {
  const value = sample(schema as Schema, root as Schema, depth);
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function sample(schema: Schema | undefined, root: Schema, depth: number): unknown {
  if (!schema || typeof schema !== "object" || depth > 8) return null;
  if (typeof schema.$ref === "string" && schema.$ref.startsWith("#/")) {
    let node: unknown = root;
    for (const part of schema.$ref.slice(2).split("/")) node = (node as Schema | undefined)?.[part];
    return sample(node as Schema, root, depth + 1);
  }
  if ("const" in schema) return schema.const;
  if ("default" in schema) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const key of ["anyOf", "oneOf"] as const) {
    if (Array.isArray(schema[key])) return sample((schema[key] as Schema[])[0], root, depth + 1);
  }
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...(schema.allOf as Schema[]).map((s) => sample(s, root, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string": {
      if (schema.format === "uri" || schema.format === "url") return "https://example.com";
      if (schema.format === "date-time") return "2026-01-01T00:00:00Z";
      if (schema.format === "email") return "a@example.com";
      const min = typeof schema.minLength === "number" ? schema.minLength : 1;
      return "x".repeat(Math.max(1, min));
    }
    case "number":
    case "integer":
      return typeof schema.minimum === "number" ? schema.minimum : typeof schema.exclusiveMinimum === "number" ? schema.exclusiveMinimum + 1 : 1;
    case "boolean":
      return false;
    case "null":
      return null;
    case "array": {
      const min = typeof schema.minItems === "number" ? schema.minItems : 0;
      return Array.from({ length: min }, () => sample(schema.items as Schema, root, depth + 1));
    }
    default: {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required ?? []) as string[];
      return Object.fromEntries(required.map((name) => [name, sample(properties[name] ?? { type: "string" }, root, depth + 1)]));
    }
  }
}
