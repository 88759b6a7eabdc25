import {
  SEPARATOR,
  closestNames,
  isAppOnly,
  qualifiedToolName,
  splitQualifiedName,
  toolModuleSpecifier,
  uniqueFunctionNames,
  type CatalogEntry,
  type ToolDefinition,
} from "@codemux/core";
import { EventEmitter } from "node:events";
import { UnknownToolError } from "./errors";
import { type SearchDocument, ToolSearchIndex, type SearchKind, type SearchOptions } from "./search/index";
import { signatureOf, summarize } from "./signature";

export interface CatalogSearchHit {
  /** A tool, or a document of another kind (its `kind` says which). */
  entry: CatalogEntry | CatalogDocument;
  score: number;
}

/**
 * Something found by search that is not a downstream tool (a saved skill): presented like a tool
 * (name, module, signature, summary) but never resolved, listed or called as one.
 */
export interface CatalogDocument extends CatalogEntry {
  /** Unique among documents; what `removeDocument` takes. */
  id: string;
  kind: Exclude<SearchKind, "tool">;
  /** Whose it is (a principal): found only by searches that name this owner; everyone's when unset. */
  owner?: string;
}

export interface CatalogSearchOptions extends SearchOptions {
  /** Who searches: documents owned by anyone else are left out; without it, every owned document is. */
  owner?: string;
}

interface CatalogEvents {
  /** A server's tools were added, replaced or removed. */
  changed: [server: string];
}

/** Every downstream tool under its codemux names, searchable, updated one server at a time. */
export class Catalog extends EventEmitter<CatalogEvents> {
  readonly #byName = new Map<string, CatalogEntry>();
  readonly #byServer = new Map<string, CatalogEntry[]>();
  /** Tools only an app may call (`_meta.ui.visibility` without "model"): kept out of every list, search and name the model reads. */
  readonly #appOnly = new Map<string, CatalogEntry>();
  readonly #documents = new Map<string, CatalogDocument>();
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
      const qualifiedName = qualifiedToolName(server, tool.name, (name) => this.#byName.has(name) || this.#appOnly.has(name));
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
      if (isAppOnly(tool)) {
        this.#appOnly.set(qualifiedName, entry);
        return entry;
      }
      this.#byName.set(qualifiedName, entry);
      this.#index.add({
        id: qualifiedName,
        server,
        name: tool.name,
        ...((tool.title ?? tool.annotations?.title) ? { title: tool.title ?? tool.annotations?.title } : {}),
        ...(tool.description ? { description: tool.description } : {}),
        parameters: parametersOf(tool),
      });
      return entry;
    });
    this.#byServer.set(
      server,
      entries.filter((entry) => !this.#appOnly.has(entry.qualifiedName)),
    );
    this.emit("changed", server);
  }

  /** Adds or replaces a searchable document of another kind than tool (a skill); its server name is what `server` filters on. */
  setDocument(document: CatalogDocument): void {
    const id = `${document.kind}:${document.id}`;
    this.#documents.set(id, document);
    this.#index.add({
      id,
      kind: document.kind,
      server: document.server,
      name: document.name,
      ...(document.tool.description ? { description: document.tool.description } : {}),
      parameters: parametersOf(document.tool),
    });
  }

  removeDocument(kind: CatalogDocument["kind"], id: string): void {
    if (this.#documents.delete(`${kind}:${id}`)) this.#index.remove(`${kind}:${id}`);
  }

  /** Documents of other kinds than tool, of one kind when given. */
  documents(kind?: CatalogDocument["kind"]): CatalogDocument[] {
    return [...this.#documents.values()].filter((d) => kind === undefined || d.kind === kind);
  }

  removeServer(server: string): void {
    if (this.#drop(server)) this.emit("changed", server);
  }

  get(qualifiedName: string): CatalogEntry | undefined {
    return this.#byName.get(qualifiedName);
  }

  /**
   * Finds a tool by `server__tool` (also accepting the downstream's own tool name after the separator); throws with
   * suggestions. With `visible`, a tool it hides is not there: it answers, and suggests, as for a name that never existed.
   */
  resolve(name: string, visible?: (qualifiedName: string) => boolean): CatalogEntry {
    const shown = (entry: CatalogEntry | undefined) => entry !== undefined && (visible === undefined || visible(entry.qualifiedName));
    const direct = this.#byName.get(name);
    if (shown(direct)) return direct as CatalogEntry;
    const split = splitQualifiedName(name);
    if (split) {
      const match = this.#byServer.get(split.server)?.find((e) => (e.name === split.tool || e.functionName === split.tool) && shown(e));
      if (match) return match;
    }
    const names = visible === undefined ? this.#byName.keys() : [...this.#byName.keys()].filter(visible);
    const close = closestNames(name, names);
    const suggestions = close.length
      ? close
      : this.search(name.replace(SEPARATOR, " "), {
          limit: 3,
          kinds: ["tool"],
          ...(visible ? { visible: (document: { id: string }) => visible(document.id) } : {}),
        }).map((h) => h.entry.qualifiedName);
    throw new UnknownToolError(name, suggestions);
  }

  /** A tool only an app may call, by its `server__tool` name (`get`, `resolve` and `entries` never show one). */
  appTool(qualifiedName: string): CatalogEntry | undefined {
    return this.#appOnly.get(qualifiedName);
  }

  /** The tools only an app may call, of one server when given. */
  appTools(server?: string): CatalogEntry[] {
    return [...this.#appOnly.values()].filter((entry) => server === undefined || entry.server === server);
  }

  entries(server?: string): CatalogEntry[] {
    if (server !== undefined) return [...(this.#byServer.get(server) ?? [])];
    return this.servers().flatMap((s) => this.#byServer.get(s) ?? []);
  }

  /** Ranked hits (tools, and documents of other kinds unless `kinds` leaves them out); a query that is exactly a tool's `server__tool` name puts that tool first. */
  search(query: string, options: CatalogSearchOptions = {}): CatalogSearchHit[] {
    const { owner, ...indexOptions } = options;
    const limit = options.limit ?? 10;
    // Documents of other owners are dropped after ranking: ask for enough more that the limit still fills.
    const hidden = this.documents().filter((d) => d.owner !== undefined && d.owner !== owner).length;
    const named = this.#byName.get(query.trim());
    const exact =
      named !== undefined && (options.visible === undefined || options.visible({ id: named.qualifiedName, server: named.server, kind: "tool" }))
        ? named
        : undefined;
    const hits = this.#index
      .search(query, { ...indexOptions, limit: limit + hidden })
      .flatMap((hit): CatalogSearchHit[] => {
        const entry = this.#byName.get(hit.id) ?? this.#documents.get(hit.id);
        if (!entry || entry === exact) return [];
        // A search that names no owner is nobody's: it sees no one's own documents (a saved skill is its principal's alone).
        if ("owner" in entry && entry.owner !== undefined && entry.owner !== owner) return [];
        return [{ entry, score: hit.score }];
      })
      .slice(0, limit);
    if (!exact || (options.server !== undefined && exact.server !== options.server) || (options.kinds !== undefined && !options.kinds.includes("tool")))
      return hits;
    return [{ entry: exact, score: Number.POSITIVE_INFINITY }, ...hits].slice(0, limit);
  }

  #drop(server: string): boolean {
    const old = this.#byServer.get(server);
    if (!old) return false;
    for (const entry of this.appTools(server)) this.#appOnly.delete(entry.qualifiedName);
    for (const entry of old) {
      this.#byName.delete(entry.qualifiedName);
      this.#index.remove(entry.qualifiedName);
    }
    this.#byServer.delete(server);
    return true;
  }
}

function parametersOf(tool: ToolDefinition): SearchDocument["parameters"] {
  const properties = (tool.inputSchema?.properties ?? {}) as Record<string, { description?: unknown; enum?: unknown; items?: { enum?: unknown } }>;
  return Object.entries(properties).map(([name, schema]) => {
    const values = enumValues(schema?.enum) ?? enumValues(schema?.items?.enum);
    return {
      name,
      ...(typeof schema?.description === "string" ? { description: schema.description } : {}),
      ...(values ? { values } : {}),
    };
  });
}

/** The string values of a JSON Schema `enum` (an array parameter's lie in `items.enum`). */
function enumValues(values: unknown): string[] | undefined {
  if (!Array.isArray(values)) return undefined;
  const strings = values.filter((v): v is string => typeof v === "string");
  return strings.length > 0 ? strings : undefined;
}
