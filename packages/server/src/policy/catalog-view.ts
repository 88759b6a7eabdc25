import type { CatalogEntry } from "@codemux/core";
import type { Catalog, CatalogSearchHit, CatalogSearchOptions, SearchKind } from "@codemux/catalog";
import { isServerSkillDocument } from "../skills/names";
import type { Grant } from "./policies";

/** The catalog as one principal sees it: what every surface (search, modules, REST, dispatch, passthrough) reads. */
export type CatalogView = Pick<Catalog, "size" | "servers" | "entries" | "get" | "resolve" | "search">;

/**
 * The catalog through a grant: tools it hides are not there at all (not listed, found, suggested or
 * resolved), and resources and prompts only of servers it shows whole. Built per request; cheap.
 */
export class GrantedCatalogView implements CatalogView {
  readonly #catalog: Catalog;
  readonly #grant: Grant;
  readonly #visible: (qualifiedName: string) => boolean;
  readonly #visibleDocument: (document: { id: string; server: string; kind: SearchKind }) => boolean;

  constructor(catalog: Catalog, grant: Grant) {
    this.#catalog = catalog;
    this.#grant = grant;
    this.#visible = (name) => grant.sees(name);
    // Saved skills are their owner's (the catalog's owner filter); resources and prompts follow their server.
    this.#visibleDocument = (document) =>
      document.kind === "tool"
        ? grant.sees(document.id)
        : (document.kind === "skill" && !isServerSkillDocument(document.id)) || grant.seesServer(document.server);
  }

  get size(): number {
    return this.entries().length;
  }

  servers(): string[] {
    return this.#catalog.servers().filter((server) => this.entries(server).length > 0);
  }

  entries(server?: string): CatalogEntry[] {
    return this.#catalog.entries(server).filter((entry) => this.#grant.sees(entry.qualifiedName));
  }

  get(qualifiedName: string): CatalogEntry | undefined {
    const entry = this.#catalog.get(qualifiedName);
    return entry !== undefined && this.#grant.sees(entry.qualifiedName) ? entry : undefined;
  }

  resolve(name: string): CatalogEntry {
    return this.#catalog.resolve(name, this.#visible);
  }

  search(query: string, options: CatalogSearchOptions = {}): CatalogSearchHit[] {
    return this.#catalog.search(query, { ...options, visible: this.#visibleDocument });
  }
}
