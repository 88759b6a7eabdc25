import { readFileSync } from "node:fs";
import type { CodegenTool } from "../src/index";

/** A tool as tools/list returns it. */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

const RESERVED = new Set(
  "arguments await break case catch class const continue debugger default delete do else enum eval export extends false finally for function if implements import in instanceof interface let new null package private protected public return static super switch this throw true try typeof var void while with yield index schemas".split(" "),
);

/** What the catalog does for codegen: camelCase names, unique per server (ignoring case), never reserved. */
export function codegenTools(server: string, tools: readonly ListedTool[]): CodegenTool[] {
  const used = new Set<string>();
  return tools.map((tool) => {
    const parts = tool.name.split(/[^A-Za-z0-9]+/).filter((part) => part.length > 0);
    let base = parts
      .map((part, i) => (i > 0 ? part.charAt(0).toUpperCase() + part.slice(1) : part === part.toUpperCase() ? part.toLowerCase() : part.charAt(0).toLowerCase() + part.slice(1)))
      .join("");
    if (base === "" || /^[0-9]/.test(base)) base = `tool${base}`;
    if (RESERVED.has(base)) base = `${base}Tool`;
    let functionName = base;
    for (let n = 2; used.has(functionName.toLowerCase()); n++) functionName = `${base}${n}`;
    used.add(functionName.toLowerCase());
    return { ...tool, server, qualifiedName: `${server}__${tool.name}`, functionName };
  });
}

export function readToolList(path: string | URL): ListedTool[] {
  return JSON.parse(readFileSync(path, "utf8")) as ListedTool[];
}
