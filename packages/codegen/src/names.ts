/** Same rule as the pool's server names: letters, digits, "-" and single "_", no "__". */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*[A-Za-z0-9]$|^[A-Za-z0-9]$/;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Words that cannot name a function in a strict-mode ES module. */
const RESERVED_WORDS = new Set([
  "arguments", "await", "break", "case", "catch", "class", "const", "continue", "debugger", "default",
  "delete", "do", "else", "enum", "eval", "export", "extends", "false", "finally", "for", "function",
  "if", "implements", "import", "in", "instanceof", "interface", "let", "new", "null", "package",
  "private", "protected", "public", "return", "static", "super", "switch", "this", "throw", "true",
  "try", "typeof", "var", "void", "while", "with", "yield",
]);

export function isIdentifier(name: string): boolean {
  return IDENTIFIER.test(name);
}

export function isReservedWord(name: string): boolean {
  return RESERVED_WORDS.has(name);
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
  return JSON.stringify(value).replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

/** An object-type member key: bare when it is an identifier, quoted otherwise (and always for `__proto__`). */
export function propertyKey(key: string): string {
  return isIdentifier(key) && key !== "__proto__" ? key : stringLiteral(key);
}
