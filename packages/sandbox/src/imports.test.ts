import { describe, expect, it } from "vitest";
import { snippetImports } from "./imports.js";

describe("snippetImports", () => {
  it("lists static, dynamic, type-only imports and re-exports, as written and in order", () => {
    const code = [
      'import { readFile } from "mcp/servers/fs";',
      "import type { Input } from 'mcp/servers/fs/readFile.ts';",
      'export * from "mcp/skills/digest";',
      'const later = await import ( "mcp/servers/git" );',
      'import "mcp/bridge";',
      "const from = 1; // a word, not an import",
    ].join("\n");
    expect(snippetImports(code)).toEqual(["mcp/servers/fs", "mcp/servers/fs/readFile.ts", "mcp/skills/digest", "mcp/servers/git", "mcp/bridge"]);
  });

  it("reads the TypeScript es-module-lexer cannot: a type-only re-export, and imports after a non-null assertion divided", () => {
    // es-module-lexer (the fast path's) skips `export type ... from` and throws at `count! / 2`, losing every import.
    const code = ['export type { Input } from "mcp/servers/fs/readFile";', "const half = count! / 2;", 'const git = await import("mcp/servers/git");'].join(
      "\n",
    );
    expect(snippetImports(code)).toEqual(["mcp/servers/fs/readFile", "mcp/servers/git"]);
  });

  it("takes no identifier that ends in import or from, and no specifier over 300 characters or across a line", () => {
    expect(snippetImports(`reimport("a"); datefrom "b"; import "${"x".repeat(301)}"; import "c\nd";`)).toEqual([]);
  });

  it("stays linear on hostile input: spaces after import, nested parentheses, unclosed quotes", () => {
    // The scanner this replaced split a run of spaces between two `\s*`: 60 KB of them took seconds.
    const hostile = [`import${" ".repeat(200_000)}x`, `import(${" ".repeat(200_000)}(`, `from "${"y".repeat(200_000)}`].join("\n");
    expect(snippetImports(hostile)).toEqual([]);
    expect(snippetImports(`${'import "z";'.repeat(100_000)}`)).toHaveLength(90_909);
  });
});
