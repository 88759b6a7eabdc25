import type { JobRunner, Logger, MetaToolContext, MetaToolServices, SecretMask } from "@codemux/core";
import type { Catalog } from "@codemux/catalog";
import type { McpFeatures } from "./mcp-features";
import type { ModuleNamespace } from "./modules/namespace";
import type { ToolCallPipeline } from "./pipeline/pipeline";
import type { Access } from "./policy/access";
import type { Readiness } from "./readiness";
import type { AnswerHints } from "./render/hints";
import type { ResultStore } from "./results";
import type { SkillLibrary } from "./skills/library";
import type { ServerSkills } from "./skills/server-skills";
import type { ResultFormat } from "./render/toon";
import type { RequestStates } from "./signed-state";
import type { SnippetHost } from "./snippets";
import type { DispatchFiles } from "./surfaces/dispatch-files";
import type { ToolPool } from "./tool-pool";

/**
 * What codemux's meta-tools, surfaces and front ends are given: each service does one thing, and none
 * of them is the wiring root. A meta-tool reads only the ones it needs.
 */
export interface CodemuxServices extends MetaToolServices {
  readonly logger: Logger;
  /** The aggregated tools (names, search), whole: what a session sees of it is `access.catalog(session)`. */
  readonly catalog: Catalog;
  /** What each session may see and call (the config's policies). */
  readonly access: Access;
  /** Masks secrets in downstream text outside call results (`CodemuxOptions.mask`). */
  readonly mask: SecretMask;
  /** Which servers are there, and waiting for them. */
  readonly readiness: Readiness;
  /** The downstream servers, for their states and why one is down. */
  readonly pool: Pick<ToolPool, "status" | "names">;
  /** Every downstream call, from any front end. */
  readonly pipeline: ToolCallPipeline;
  /** The `mcp/*` modules: lookup, listing, reading. */
  readonly namespace: ModuleNamespace;
  /** Runs snippets. */
  readonly snippets: SnippetHost;
  /** Results too large to answer whole, kept for their owner. */
  readonly results: ResultStore;
  /** Results larger than this (bytes of JSON) are kept and previewed instead of answered whole. */
  readonly largeResultBytes: number;
  /** How JSON text results reach a model (MCP answers; REST answers JSON whatever it says). */
  readonly resultFormat: ResultFormat;
  /** Folders dispatch's `call` reads argument files from and writes result files to; none without the config's `dispatch`. */
  readonly dispatchFiles: DispatchFiles | undefined;
  readonly skills: SkillLibrary;
  /** Downstream servers' skills (the skills extension), read under `mcp/server-skills/`. */
  readonly serverSkills: ServerSkills;
  /** Resources, prompts, completions and logging of every server. */
  readonly features: McpFeatures;
  /** Runs `background: true` requests; without it they are refused. */
  readonly jobs: JobRunner | undefined;
  /** Signs the requestState a 2026-07-28 client is handed when a downstream server asks during its call, and checks it on the retry. */
  readonly requestStates: RequestStates;
  /** How the surface the request came through names its own ways, in hints (each surface has its own copy of the services with its hints). */
  readonly hints: AnswerHints;
}

/** A meta-tool's context inside codemux. */
export type ServerMetaToolContext = MetaToolContext<CodemuxServices>;
