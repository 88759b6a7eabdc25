import type { JobRunner, Logger, MetaTool, RateBuckets, SecretMask, SkillShelf, ToolCallMiddleware } from "@codemux/core";
import type { PoolConfig, PoolOptions } from "@codemux/pool";
import type { CodeExecutor, SandboxOptions } from "@codemux/sandbox";
import type { CoreLink } from "./core-link";
import type { TaskStoreFactory } from "./jobs";
import type { ModuleSource } from "./modules/namespace";
import type { PolicyConfig } from "./policy/config";
import type { ResultFormat } from "./render/toon";
import type { Retention } from "./retention";
import type { ScanMode, ScreenGate } from "./screen";
import type { CodemuxServices } from "./services";
import type { Store } from "./stores/store";
import type { DispatchFiles } from "./surfaces/dispatch-files";
import type { SurfaceFactory } from "./surfaces/surface";
import type { ToolPool } from "./tool-pool";

/** What a core is made of and how it serves: `new Codemux(options)` composes its services from these. */
export interface CodemuxOptions {
  config: PoolConfig;
  /**
   * The config's `security.scan` (default "quarantine"), and the pin plugin's judgement of listed tools: what the
   * model is shown of the servers' definitions (see `ToolScreen`).
   */
  scan?: { mode?: ScanMode; gate?: ScreenGate };
  /** The surface clients see, by name: `code` (default, the meta-tools), `passthrough` (every downstream tool), `dispatch` (one tool), or one added in `surfaces`. */
  mode?: string;
  logger?: Logger;
  /** The folder codemux was given (`--root`): what a shared server is told its roots are when its config entry names none. */
  root?: string;
  /** The downstream servers; a `ServerPool` of `config` when absent. */
  pool?: ToolPool;
  /** Options of the default `ServerPool`. */
  poolOptions?: PoolOptions;
  /** Runs snippets; a `Sandbox` (with `sandbox` options) when absent, started on first use. */
  executor?: CodeExecutor;
  sandbox?: SandboxOptions;
  /** Where large results are kept; files in a private temporary folder when absent. */
  resultStore?: Store;
  /** Where the last good catalog is kept, so a restart answers at once; `cacheDir` makes a file store; off when both are absent. */
  cacheStore?: Store;
  cacheDir?: string;
  /** Skip reading the cached catalog (it is still written): `--refresh-cache`. */
  refreshCache?: boolean;
  /** A cached catalog older than this (ms) still answers at start, and its lazy servers are connected once in the background to list their tools afresh; no limit by default. */
  catalogCacheTtlMs?: number;
  /** Middleware around every downstream call, first outermost (before the built-in argument validation). */
  middleware?: ToolCallMiddleware[];
  /** Bound to this core as it is composed: parts made before it (plugins, jobs) reach its result store and policies through it. */
  link?: CoreLink;
  /**
   * Masks secrets in what servers send outside a call's result: log lines, progress, questions, prompts,
   * completions, list descriptions, instructions, failure reasons (`@codemux/hooks`' `mask`, by the redact
   * plugin's patterns). Nothing is masked without it; codemux's own log lines are masked by the built-in patterns all the same.
   */
  mask?: SecretMask;
  /** Who may see and call what (the config's `policies`, see `policiesOf`); everyone sees everything without it. */
  policies?: PolicyConfig;
  /**
   * Where the policies' calls per minute are counted: with several instances, buckets they share (Redis's),
   * so that a rule's limit holds across them; this instance's memory when absent.
   */
  policyBuckets?: RateBuckets;
  /** Reads the policies again at each `reload` (from the config file); a reload keeps the policies it started with without it. */
  reloadPolicies?: () => Promise<PolicyConfig | undefined>;
  /** Extra modes, by name. */
  surfaces?: Record<string, SurfaceFactory>;
  /** More meta-tools for mode `code` (jobs, agent...), after the built-in ones. */
  metaTools?: MetaTool<never, CodemuxServices>[];
  /** Runs `background: true` requests; without it they are refused. */
  jobs?: JobRunner;
  /** Serves MCP tasks (task-augmented tools/call, tasks/get, result, list, cancel) for each session; off without it. */
  taskStore?: TaskStoreFactory;
  /** More modules snippets may import, asked after codemux's own; each answers a specifier with TypeScript source or undefined. */
  moduleSources?: ModuleSource[];
  /** codemux's own folder for data that outlives a run (skills, journals); features that need it are off without it. */
  dataDir?: string;
  /** The folder of skills a team commits; `./.codemux/skills` when it exists and this is absent. */
  projectSkillsDir?: string;
  /** Where every instance of a deployment keeps saved skills (Redis) instead of `dataDir`; `services.skills.refresh()` reads them before serving. */
  sharedSkills?: SkillShelf;
  /** Keep each snippet, its bundle and source map under this folder (one subfolder a run), for debugging. */
  keepBundlesDir?: string;
  /** Log every downstream call at debug level (name, origin, outcome, duration); off by default, so the hot path builds no log line. */
  logCalls?: boolean;
  /** Milliseconds since the epoch; `Date.now` when absent. */
  clock?: () => number;
  /** How long a call waits for the server it needs while that server is still connecting. */
  startupWaitMs?: number;
  /** How long after start a search waits for servers with nothing cached. */
  discoveryWaitMs?: number;
  /** Results larger than this (bytes of JSON) are kept and previewed instead of returned whole. */
  largeResultBytes?: number;
  /** `toon`: JSON text results reach the model as TOON where that is shorter (tables of objects); `json` (default) leaves them as they are. */
  resultFormat?: ResultFormat;
  /** Folders dispatch's `call` may read `argumentsFile` from and write `resultToFile` to: the config's `dispatch`. */
  dispatchFiles?: DispatchFiles;
  resultTtlMs?: number;
  /** The key (32 bytes or more) codemux signs the requestState it hands 2026-07-28 clients with; `CODEMUX_STATE_KEY`, else a random one per process. */
  stateKey?: string;
  /** How long a 2026-07-28 client has to retry a call parked on a 2025 server's question (5 minutes when absent). */
  parkedCallTtlMs?: number;
  /** This instance's id behind a load balancer: parked calls' ids start with it, so a retry that reaches another instance is forwarded here. */
  instanceId?: string;
  /** How long each principal's kept results (and, through `retentionFor`, its jobs and audit lines) are kept: the config's `retention`. */
  retention?: Retention;
}
