const CONSTRAINTS = [
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
] as const;

/** Longer defaults are cut: they document, and a model pays for every token it reads. */
const MAX_DEFAULT_LENGTH = 200;

/** The JSDoc lines for one schema: its description (or title), then tags for what the type cannot say. */
export function schemaDocLines(schema: unknown): string[] {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return [];
  const s = schema as Record<string, unknown>;
  const lines: string[] = [];
  const text = typeof s.description === "string" ? s.description : typeof s.title === "string" ? s.title : undefined;
  if (text !== undefined) lines.push(text);
  if (s.deprecated === true) lines.push("@deprecated");
  if (s.default !== undefined) lines.push(`@default ${compactJson(s.default)}`);
  if (typeof s.format === "string") lines.push(`@format ${s.format}`);
  for (const key of CONSTRAINTS) {
    const value = s[key];
    if (typeof value === "number" || typeof value === "string") lines.push(`@${key} ${value}`);
  }
  return lines;
}

function compactJson(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > MAX_DEFAULT_LENGTH ? `${json.slice(0, MAX_DEFAULT_LENGTH)}…` : json;
}
