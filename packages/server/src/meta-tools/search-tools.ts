import type { CatalogEntry } from "@codemux/core";
import { MAX_QUERY_CHARS } from "../defaults";
import { BadRequestError } from "../errors";
import { textResult } from "../render";
import { defineMetaTool } from "./registry";

export type SearchDetail = "name" | "summary" | "full";

export interface SearchRequest {
  query: string;
  limit?: number;
  server?: string;
  detail?: SearchDetail;
}

// These descriptions are the whole upfront cost of codemux in the model's context: every word earns its place.
export const searchTools = defineMetaTool<Required<Omit<SearchRequest, "server">> & { server?: string }>({
  name: "search_tools",
  description: 'Find tools for a task in a few words ("create github issue").',
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", maxLength: MAX_QUERY_CHARS },
      limit: { type: "integer", minimum: 1, maximum: 50, default: 10 },
      server: { type: "string" },
      detail: { type: "string", enum: ["name", "summary", "full"], default: "summary" },
    },
    required: ["query"],
  },
  annotations: { readOnlyHint: true },
  run: async (input, { core, session }) => textResult(await core.searchTools(input, { session })),
});

/** Ranked hits as compact lines: `server__tool  module`, then the signature and, with summary, a short description. */
export function formatHits(entries: readonly CatalogEntry[], detail: SearchDetail): string[] {
  return entries.flatMap((entry) => {
    // A resource or prompt says what it is (a skill's name already does); a tool says what it does to data.
    const kind = "kind" in entry ? entry.kind : undefined;
    const intent = kind === "resource" || kind === "prompt" ? kind : kind === undefined ? intentOf(entry.tool.annotations) : undefined;
    const lines = [`${entry.qualifiedName}  ${entry.moduleSpecifier}${intent ? `  (${intent})` : ""}`, `  ${entry.signature}`];
    if (detail !== "name" && entry.summary) lines.push(`  ${entry.summary}`);
    if (detail === "full") lines.push(`  input schema: ${JSON.stringify(entry.tool.inputSchema)}`);
    return lines;
  });
}

/** The query as the ranker takes it, or a sentence saying why not. */
export function checkQuery(query: string): string {
  // Ranking a query costs time on the shared event loop in proportion to its length.
  if (query.length > MAX_QUERY_CHARS) throw new BadRequestError(`"query" is ${query.length} characters long; describe the task in at most ${MAX_QUERY_CHARS}.`);
  const trimmed = query.trim();
  if (!trimmed) throw new BadRequestError('"query" must not be empty: describe what you want to do in a few words.');
  return trimmed;
}

/** What a tool does to data, from its server's annotations (hints, not guarantees): read-only, writes, or destructive. */
export function intentOf(annotations: { readOnlyHint?: boolean; destructiveHint?: boolean } | undefined): "read-only" | "writes" | "destructive" | undefined {
  if (!annotations) return undefined;
  if (annotations.readOnlyHint === true) return "read-only";
  // The MCP default for a tool that is not read-only is destructive unless it says otherwise.
  if (annotations.destructiveHint === false) return "writes";
  if (annotations.readOnlyHint === false || annotations.destructiveHint === true) return "destructive";
  return undefined;
}
