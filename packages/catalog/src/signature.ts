type Schema = Record<string, unknown>;

const MAX_SIGNATURE = 200;

/** One line a model can read at a glance: `readTextFile({ path: string, head?: number })`. */
export function signatureOf(functionName: string, inputSchema: Schema): string {
  const properties = (inputSchema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((inputSchema.required ?? []) as string[]);
  const names = Object.keys(properties);
  if (names.length === 0) return `${functionName}()`;
  const params = names.map(
    (name) => `${/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name)}${required.has(name) ? "" : "?"}: ${typeOf(properties[name]!, inputSchema, 0)}`,
  );
  const line = `${functionName}({ ${params.join(", ")} })`;
  return line.length <= MAX_SIGNATURE ? line : shorten(functionName, params);
}

function shorten(functionName: string, params: string[]): string {
  const kept: string[] = [];
  for (const param of params) {
    if (`${functionName}({ ${[...kept, param].join(", ")}, ... })`.length > MAX_SIGNATURE) break;
    kept.push(param);
  }
  return `${functionName}({ ${[...kept, "..."].join(", ")} })`;
}

function typeOf(schema: Schema, root: Schema, depth: number): string {
  if (depth > 2 || typeof schema !== "object" || schema === null) return "unknown";
  if (typeof schema.$ref === "string") {
    const target = resolveRef(schema.$ref, root);
    return target ? typeOf(target, root, depth + 1) : "unknown";
  }
  if ("const" in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.map((v) => JSON.stringify(v));
    return values.length <= 4 ? values.join(" | ") : `${values.slice(0, 3).join(" | ")} | ...`;
  }
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(variants)) return [...new Set(variants.map((v) => typeOf(v, root, depth + 1)))].join(" | ");
  const type = schema.type;
  if (Array.isArray(type)) return type.map((t) => typeOf({ ...schema, type: t }, root, depth)).join(" | ");
  switch (type) {
    case "string":
    case "number":
    case "boolean":
    case "null":
      return type;
    case "integer":
      return "number";
    case "array": {
      const item = schema.items && !Array.isArray(schema.items) ? typeOf(schema.items as Schema, root, depth + 1) : "unknown";
      return item.includes(" ") ? `(${item})[]` : `${item}[]`;
    }
    case "object":
      return "object";
    default:
      return schema.properties ? "object" : "unknown";
  }
}

function resolveRef(ref: string, root: Schema): Schema | undefined {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(2).split("/")) {
    node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return typeof node === "object" && node !== null ? (node as Schema) : undefined;
}

/** The description's first sentence, at most `max` characters. */
export function summarize(description: string | undefined, max = 140): string {
  const text = (description ?? "").replace(/\s+/g, " ").trim();
  const sentence = /^(.+?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
  return sentence.length <= max ? sentence : `${sentence.slice(0, max - 1).trimEnd()}…`;
}
