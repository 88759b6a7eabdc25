/** Characters of a source read for its imports at most: past them, nothing more is reported. */
const MAX_IMPORT_SCAN_CHARS = 1_000_000;
/** A longer specifier is not one (module paths are short). */
const MAX_SPECIFIER_CHARS = 300;
// After `from` or `import`, at most one `(`: no two adjacent `\s*` a run of spaces could be split between (that was quadratic).
const IMPORT = new RegExp(`(?<![\\w$])(?:from|import)\\s*(?:\\(\\s*)?["']([^"'\\n]{1,${MAX_SPECIFIER_CHARS}})["']`, "g");

/**
 * The module specifiers a snippet or module imports or re-exports, static, dynamic and type-only,
 * as written, in order (a `.ts` suffix kept). A word `from` or `import` followed by a quoted string in
 * a comment or a string counts too: callers use the list to wait for servers and gather modules, where
 * one too many costs nothing. Linear in the source's length, read up to `MAX_IMPORT_SCAN_CHARS`.
 * Not es-module-lexer (the fast path's, which must vouch for every import it runs): it reads
 * JavaScript, so it skips `export type { A } from` and throws at `a! / b`, where one too few would
 * leave a server unwaited for or a skill's module unchecked.
 */
export function snippetImports(source: string): string[] {
  const found: string[] = [];
  for (const match of source.slice(0, MAX_IMPORT_SCAN_CHARS).matchAll(IMPORT)) found.push(match[1] as string);
  return found;
}
