import type { SessionInfo } from "@codemux/core";
import { BadRequestError } from "./errors";
import type { Access } from "./policy/access";
import type { Grant } from "./policy/policies";
import type { KeptResult, ResultOwner, ResultStore } from "./results";

/**
 * What parts made before the core ask of it once it serves: the plugins keep full results in its store
 * (summarize), the jobs read a policy's `concurrentJobs`. Made first, handed to those parts and to the core
 * (`CodemuxOptions.link`), which binds it as it composes its services; asked before that, it throws.
 *
 * @example
 * const link = new CoreLink();
 * const plugins = await loadPlugins({ ..., results: { keep: link.keep } });
 * const core = new Codemux({ config, link, middleware: [plugins.middleware] });
 */
export class CoreLink {
  #parts: { results: ResultStore; access: Access } | undefined;

  /** Keeps a result too large to answer whole in the core's result store, for its owner alone. */
  readonly keep = (tool: string, text: string, owner: ResultOwner): Promise<KeptResult> => this.#bound().results.keep(tool, text, owner);

  /** A session's grant under the core's policies in force (a reload changes them); undefined without policies. */
  readonly grant = (session: SessionInfo): Grant | undefined => this.#bound().access.grant(session);

  /** Ties the link to a core's services; `composeCodemux` calls it once. */
  bind(parts: { results: ResultStore; access: Access }): void {
    if (this.#parts) throw new BadRequestError("This CoreLink is already bound to a core; make one per core.");
    this.#parts = parts;
  }

  #bound(): { results: ResultStore; access: Access } {
    if (!this.#parts) throw new BadRequestError("The core this CoreLink is for is not composed yet; ask it only once the core is made.");
    return this.#parts;
  }
}
