import type { SessionInfo } from "@codemux/core";
import type { Catalog } from "@codemux/catalog";
import { GrantedCatalogView, type CatalogView } from "./catalog-view";
import type { PolicyConfig } from "./config";
import { Policies, type Grant } from "./policies";

/**
 * The one place that says what a session may see: its grant under the config's policies, and the catalog
 * as it sees it. Every surface (search, modules, REST, OpenAPI, dispatch, passthrough, resources and
 * prompts) reads the catalog through `catalog(session)`; the call pipeline checks every call by `grant`.
 * Without policies every session sees the whole catalog, at the cost of one check.
 */
export class Access {
  readonly #catalog: Catalog;
  #policies: Policies | undefined;

  constructor(catalog: Catalog, policies: PolicyConfig | undefined) {
    this.#catalog = catalog;
    this.#policies = policies === undefined ? undefined : new Policies(policies);
  }

  /** Replaces the policies (a config reload); grants are made afresh from the next request on. */
  update(policies: PolicyConfig | undefined): void {
    this.#policies = policies === undefined ? undefined : new Policies(policies);
  }

  /** Whether policies are configured at all. */
  get enabled(): boolean {
    return this.#policies !== undefined;
  }

  /** The session's grant; undefined without policies. */
  grant(session: SessionInfo): Grant | undefined {
    return this.#policies?.grant(session);
  }

  /** The catalog as `session` sees it; the whole catalog without policies or for a grant that shows everything. */
  catalog(session: SessionInfo | undefined): CatalogView {
    if (this.#policies === undefined || session === undefined) return this.#catalog;
    const grant = this.#policies.grant(session);
    return grant.all ? this.#catalog : new GrantedCatalogView(this.#catalog, grant);
  }

  /** Whether `session`'s grant shows `server` whole: its resources, prompts and state (while it is down). */
  seesServer(session: SessionInfo, server: string): boolean {
    return this.#policies === undefined || this.#policies.grant(session).seesServer(server);
  }

  /** Which servers `session` may know of (by name, for notes on servers still connecting); undefined when it may know of all. */
  serverFilter(session: SessionInfo | undefined): ((server: string) => boolean) | undefined {
    if (this.#policies === undefined || session === undefined) return undefined;
    return (server) => this.servers(session, [server]).length > 0;
  }

  /** Of `servers`, the ones `session` may know of: those its grant shows whole or shows a tool of. */
  servers(session: SessionInfo | undefined, servers: readonly string[]): string[] {
    if (this.#policies === undefined || session === undefined) return [...servers];
    const catalog = this.catalog(session);
    return servers.filter((server) => this.seesServer(session, server) || catalog.entries(server).length > 0);
  }
}
