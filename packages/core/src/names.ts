/**
 * The naming contract of codemux, in one place: server names, `server__tool` names, function
 * names and module specifiers. Every package that names a tool or a module imports it from here.
 */

/** MCP clients reject tool names over 64 characters or outside this alphabet. */
export const MAX_TOOL_NAME_LENGTH = 64;
const ALLOWED = /[^A-Za-z0-9_-]/g;

/** A server name: letters, digits, "-" and single "_" (never "__", which separates server and tool). */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*[A-Za-z0-9]$|^[A-Za-z0-9]$/;

/** Between server and tool in a qualified name: `fs__read_text_file`. */
export const SEPARATOR = "__";

/** Words that cannot name a function in a strict-mode ES module, and globals a wrapper must not shadow. */
const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for function if " +
    "import in instanceof new null return super switch this throw true try typeof var void while with yield let static " +
    "implements interface package private protected public await arguments eval undefined NaN Infinity"
  ).split(" "),
);

/** File names inside a server's module folder that belong to the server itself: mcp/servers/<server>/index and .../schemas. */
export const SERVER_MODULE_NAMES: ReadonlySet<string> = new Set(["index", "schemas"]);

/** Every module a snippet can import starts with this. */
export const MODULE_ROOT = "mcp";
/** The module of `callTool` / `callToolRaw` by qualified name. */
export const BRIDGE_SPECIFIER = "mcp/bridge";
/** Prefix of every server's modules. */
export const SERVERS_PREFIX = "mcp/servers/";

/** `mcp/servers/<server>`: every tool of one server. */
export function serverModuleSpecifier(server: string): string {
  return `${SERVERS_PREFIX}${server}`;
}

/** `mcp/servers/<server>/<functionName>`: one tool's wrapper. */
export function toolModuleSpecifier(server: string, functionName: string): string {
  return `${SERVERS_PREFIX}${server}/${functionName}`;
}

/** After a tool's module path, names the module of its JSON Schemas: `mcp/servers/fs/readTextFile.schema`. */
export const SCHEMA_MODULE_SUFFIX = ".schema";

/** True for a word that cannot name a generated function. */
export function isReservedWord(name: string): boolean {
  return RESERVED.has(name);
}

/** Splits `server__tool` at the first separator; undefined when there is none. */
export function splitQualifiedName(name: string): { server: string; tool: string } | undefined {
  const at = name.indexOf(SEPARATOR);
  return at > 0 ? { server: name.slice(0, at), tool: name.slice(at + SEPARATOR.length) } : undefined;
}

/** Splits an identifier into lower-case words: `API-post-page` -> [api, post, page], `getHTTPStatus` -> [get, http, status]. */
export function splitWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

/** `read_text_file` -> `readTextFile`; a leading digit gets `_`, a reserved word a trailing `_`. */
export function toFunctionName(toolName: string): string {
  const words = splitWords(toolName);
  let name = words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join("") || "tool";
  if (/^[0-9]/.test(name)) name = `_${name}`;
  return RESERVED.has(name) || SERVER_MODULE_NAMES.has(name.toLowerCase()) ? `${name}_` : name;
}

/** Function names for one server's tools, in order, made unique by a numeric suffix (ignoring case: `ReadFile` and `readFile` would share type names). */
export function uniqueFunctionNames(toolNames: string[]): string[] {
  const used = new Set<string>();
  return toolNames.map((toolName) => {
    const base = toFunctionName(toolName);
    let name = base;
    for (let n = 2; used.has(name.toLowerCase()); n++) name = `${base}${n}`;
    used.add(name.toLowerCase());
    return name;
  });
}

/** `server__tool`, sanitised, within 64 characters; a name cut short ends in a hash of the full name so it stays unique. */
export function qualifiedToolName(server: string, tool: string, taken: (name: string) => boolean = () => false): string {
  const full = `${server}${SEPARATOR}${tool.replace(ALLOWED, "_")}`;
  if (full.length <= MAX_TOOL_NAME_LENGTH && !taken(full)) return full;
  for (let salt = 0; ; salt++) {
    const suffix = `_${hash(`${server}/${tool}#${salt}`)}`;
    const candidate = full.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length) + suffix;
    if (!taken(candidate)) return candidate;
  }
}

/** Short FNV-1a hash, base 36, deterministic across runs. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36).padStart(7, "0").slice(0, 7);
}
