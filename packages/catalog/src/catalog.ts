import { EventEmitter } from "node:events";
import { UnknownToolError } from "./errors";
import { SEPARATOR, qualifiedToolName, splitQualifiedName, toolModuleSpecifier, uniqueFunctionNames } from "./names";
import { ToolSearchIndex, type SearchOptions } from "./search/index";
import { signatureOf, summarize } from "./signature";
import { closestNames } from "./suggest";
import type { CatalogEntry, ToolDefinition } from "./tool";

export interface CatalogSearchHit {
  entry: CatalogEntry;
  score: number;
}

interface CatalogEvents {
  /** A server's tools were added, replaced or removed. */
  changed: [server: string];
}

/** Every downstream tool under its codemux names, searchable, updated one server at a time. */
export class Catalog extends EventEmitter<CatalogEvents> {
  readonly #byName = new Map<string, CatalogEntry>();
  readonly #byServer = new Map<string, CatalogEntry[]>();
  readonly #index = new ToolSearchIndex();

  get size(): number {
    return this.#byName.size;
  }

  servers(): string[] {
    return [...this.#byServer.keys()].sort();
  }

  /** Replaces one server's tools (an empty list keeps the server known with no tools). */
  setServerTools(server: string, tools: readonly ToolDefinition[]): void {
    this.#drop(server);
    const functionNames = uniqueFunctionNames(tools.map((t) => t.name));
    const entries = tools.map((tool, i): CatalogEntry => {
      const functionName = functionNames[i]!;
      const qualifiedName = qualifiedToolName(server, tool.name, (name) => this.#byName.has(name));
      const entry: CatalogEntry = {
        qualifiedName,
        server,
        name: tool.name,
        functionName,
        moduleSpecifier: toolModuleSpecifier(server, functionName),
        signature: signatureOf(functionName, tool.inputSchema ?? { type: "object" }),
        summary: summarize(tool.description ?? tool.title),
        tool,
      };
      this.#byName.set(qualifiedName, entry);
      this.#index.add({
        id: qualifiedName,
        server,
        name: tool.name,
        ...(tool.title ?? tool.annotations?.title ? { title: tool.title ?? tool.annotations?.title } : {}),
        ...(tool.description ? { description: tool.description } : {}),
        parameters: parametersOf(tool),
      });
      return entry;
    });
    this.#byServer.set(server, entries);
    this.emit("changed", server);
  }

  removeServer(server: string): void {
    if (this.#drop(server)) this.emit("changed", server);
  }

  get(qualifiedName: string): CatalogEntry | undefined {
    return this.#byName.get(qualifiedName);
  }

  /** Finds a tool by `server__tool` (also accepting the downstream's own tool name after the separator); throws with suggestions. */
  resolve(name: string): CatalogEntry {
    const direct = this.#byName.get(name);
    if (direct) return direct;
    const split = splitQualifiedName(name);
    if (split) {
      const match = this.#byServer.get(split.server)?.find((e) => e.name === split.tool || e.functionName === split.tool);
      if (match) return match;
    }
    const close = closestNames(name, this.#byName.keys());
    const suggestions = close.length ? close : this.search(name.replace(SEPARATOR, " "), { limit: 3 }).map((h) => h.entry.qualifiedName);
    throw new UnknownToolError(name, suggestions);
  }

  entries(server?: string): CatalogEntry[] {
    if (server !== undefined) return [...(this.#byServer.get(server) ?? [])];
    return this.servers().flatMap((s) => this.#byServer.get(s) ?? []);
  }

  /** Ranked hits; a query that is exactly a tool's `server__tool` name puts that tool first. */
  search(query: string, options: SearchOptions = {}): CatalogSearchHit[] {
    const exact = this.#byName.get(query.trim());
    const hits = this.#index.search(query, options).flatMap((hit) => {
      const entry = this.#byName.get(hit.id);
      return entry && entry !== exact ? [{ entry, score: hit.score }] : [];
    });
    if (!exact || (options.server !== undefined && exact.server !== options.server)) return hits;
    return [{ entry: exact, score: Number.POSITIVE_INFINITY }, ...hits].slice(0, options.limit ?? 10);
  }

  #drop(server: string): boolean {
    const old = this.#byServer.get(server);
    if (!old) return false;
    for (const entry of old) {
      this.#byName.delete(entry.qualifiedName);
      this.#index.remove(entry.qualifiedName);
    }
    this.#byServer.delete(server);
    return true;
  }
}

function parametersOf(tool: ToolDefinition): Array<{ name: string; description?: string }> {
  const properties = (tool.inputSchema?.properties ?? {}) as Record<string, { description?: unknown }>;
  return Object.entries(properties).map(([name, schema]) =>
    typeof schema?.description === "string" ? { name, description: schema.description } : { name },
  );
}
