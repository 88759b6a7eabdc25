const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function isIdentifier(name: string): boolean {
  return IDENTIFIER.test(name);
}

/** `readTextFile` -> `ReadTextFile`; the input is already an identifier. */
export function pascalCase(identifier: string): string {
  return identifier.charAt(0).toUpperCase() + identifier.slice(1);
}

/** A JSON Schema key such as `richText-request` or `2d` -> a type name such as `RichTextRequest` or `T2d`. */
export function typeNameFromKey(key: string): string {
  const name = key
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part.length > 0)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
  if (name === "") return "Def";
  return /^[0-9]/.test(name) ? `T${name}` : name;
}

/** A string literal safe anywhere in TS source; JSON.stringify escapes quotes, backslashes and control characters. */
export function stringLiteral(value: string): string {
  return JSON.stringify(value)
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** An object-type member key: bare when it is an identifier, quoted otherwise (and always for `__proto__`). */
export function propertyKey(key: string): string {
  return isIdentifier(key) && key !== "__proto__" ? key : stringLiteral(key);
}
