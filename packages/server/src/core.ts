import { Catalog, type CatalogEntry, type ToolDefinition } from "@codemux/catalog";
import { ModuleTree, writeModuleTree, type CodegenTool } from "@codemux/codegen";
import { ServerPool, ServerUnavailableError, silentLogger, type Logger, type PoolConfig, type PoolOptions, type ServerStatus } from "@codemux/pool";
import { Sandbox, type ExecuteResult, type SandboxOptions } from "@codemux/sandbox";
import type { CallToolResult, Progress, Tool } from "@modelcontextprotocol/sdk/types.js";
import { EventEmitter } from "node:events";
import { CatalogCache } from "./catalog-cache";
import { BadRequestError } from "./errors";
import { ToolInvoker } from "./invoker";
import { formatSearch, type SearchRequest } from "./meta-tools/search";
import { ResultStore } from "./results";

export type Mode = "code" | "passthrough";

const MAX_QUERY_CHARS = 1000;

export interface CodemuxOptions {
  config: PoolConfig;
  /** `code` (default): the meta-tools. `passthrough`: every downstream tool under its `server__tool` name. */
  mode?: Mode;
  logger?: Logger;
  pool?: PoolOptions;
  sandbox?: SandboxOptions;
  /** How long a request waits for servers that are still connecting at startup. */
  startupWaitMs?: number;
  /** Results larger than this (bytes of JSON) are kept and previewed instead of returned whole. */
  largeResultBytes?: number;
  resultTtlMs?: number;
  /** Where the last good catalog of this config is kept, so a restart answers at once; off when absent. */
  cacheDir?: string;
}

export interface ExecuteOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  onprogress?: (progress: { tool: string; progress: Progress }) => void;
}

interface CodemuxEvents {
  /** The set of tools changed (a server connected, dropped or changed its list). */
  toolsChanged: [];
}

/**
 * The shared heart of codemux: one pool, catalog, module tree and sandbox that serve any
 * number of client sessions (`createSessionServer(core)` makes the MCP server of one session).
 */
export class Codemux extends EventEmitter<CodemuxEvents> {
  readonly pool: ServerPool;
  readonly catalog = new Catalog();
  readonly modules = new ModuleTree();
  readonly invoker: ToolInvoker;
  readonly results: ResultStore;
  readonly mode: Mode;
  readonly logger: Logger;
  readonly largeResultBytes: number;
  readonly #startupWaitMs: number;
  readonly #sandboxOptions: SandboxOptions | undefined;
  readonly #cache: CatalogCache | undefined;
  /** Servers whose tools so far come from the disk cache, not from the server. */
  readonly #cached = new Set<string>();
  #saveTimer: NodeJS.Timeout | undefined;
  #sandbox: Sandbox | undefined;

  constructor(readonly options: CodemuxOptions) {
    super();
    this.setMaxListeners(0);
    this.mode = options.mode ?? "code";
    this.logger = options.logger ?? silentLogger;
    this.largeResultBytes = options.largeResultBytes ?? 64 * 1024;
    this.#startupWaitMs = options.startupWaitMs ?? 15_000;
    this.#sandboxOptions = options.sandbox;
    this.results = new ResultStore(options.resultTtlMs ? { ttlMs: options.resultTtlMs } : {});
    this.pool = new ServerPool(options.config, { logger: this.logger, ...options.pool });
    this.invoker = new ToolInvoker(this.pool, this.catalog);
    this.#cache = options.cacheDir ? new CatalogCache(options.cacheDir, options.config) : undefined;
    this.pool.on("tools", (server, tools) => {
      this.#cached.delete(server);
      this.#setServerTools(server, tools);
      this.#scheduleSave();
    });
  }

  /**
   * Connects every server in the background (after loading the cached catalog, if any); `ready()` waits for them.
   * `warmSandbox` starts a sandbox worker (QuickJS, esbuild) once they are up, so the first execute_code does not wait for it.
   */
  start(options: { warmSandbox?: boolean } = {}): void {
    const names = new Set(this.pool.names);
    for (const [server, tools] of this.#cache?.load() ?? []) {
      if (!names.has(server) || this.catalog.entries(server).length > 0) continue;
      this.#cached.add(server);
      this.#setServerTools(server, tools);
    }
    const started = this.pool.start();
    if (options.warmSandbox && this.mode === "code") void started.then(() => this.sandbox.execute({ code: "export default 0" })).catch(() => undefined);
  }

  /**
   * Waits (bounded) until every server has connected or failed; true when all settled in time.
   * Servers known from the cache do not hold answers up: their tools are there already.
   */
  async ready(timeoutMs = this.#startupWaitMs): Promise<boolean> {
    const waiting = this.pool.status().some((s) => s.state === "connecting" && !this.#cached.has(s.name));
    if (!waiting) return true;
    return this.pool.settled(timeoutMs);
  }

  /** Waits (bounded) until every server has connected or failed, cached or not: for one-shot commands that want live servers. */
  settled(timeoutMs = this.#startupWaitMs): Promise<boolean> {
    return this.pool.settled(timeoutMs);
  }

  status(): ServerStatus[] {
    return this.pool.status();
  }

  /** Servers still connecting, for a note under answers given before they are all there. */
  pendingNote(): string[] {
    const connecting = this.pool.status().filter((s) => s.state === "connecting").map((s) => s.name);
    const missing = connecting.filter((s) => !this.#cached.has(s));
    const cached = connecting.filter((s) => this.#cached.has(s));
    return [
      ...(missing.length ? [`(still connecting: ${missing.join(", ")}; their tools are not listed yet)`] : []),
      ...(cached.length ? [`(still connecting: ${cached.join(", ")}; their tools are listed from the last run)`] : []),
    ];
  }

  async searchTools(request: SearchRequest): Promise<string> {
    // Ranking a query costs time on the shared event loop in proportion to its length.
    if (request.query.length > MAX_QUERY_CHARS) throw new BadRequestError(`"query" is ${request.query.length} characters long; describe the task in at most ${MAX_QUERY_CHARS}.`);
    await this.ready();
    const down = request.server === undefined ? undefined : this.pool.status().find((s) => s.name === request.server && s.state !== "ready");
    if (down && this.catalog.entries(down.name).length === 0) throw new ServerUnavailableError(down.name, down.error ?? `it is ${down.state}`);
    return formatSearch(this.catalog, request, this.pendingNote());
  }

  async callTool(name: string, args: unknown, options: { signal?: AbortSignal; onprogress?: (p: Progress) => void; timeoutMs?: number } = {}): Promise<CallToolResult> {
    await this.ready();
    return this.invoker.call(name, args, options);
  }

  /** Runs a snippet; its tool calls take the same path as call_tool. */
  async executeCode(code: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    await this.ready();
    return this.sandbox.execute({
      code,
      modules: (specifier) => this.modules.get(specifier),
      onCall: (name, args, context) =>
        this.invoker.call(name, args, {
          signal: context.signal,
          ...(options.onprogress ? { onprogress: (progress: Progress) => options.onprogress?.({ tool: name, progress }) } : {}),
        }),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /** Writes the wrapper modules to disk (`codemux codegen --out DIR`); the tree type-checks with tsc. */
  async writeModules(outDir: string): Promise<{ files: number }> {
    await this.ready();
    return writeModuleTree(this.modules, outDir);
  }

  get sandbox(): Sandbox {
    this.#sandbox ??= new Sandbox(this.#sandboxOptions);
    return this.#sandbox;
  }

  /** Every downstream tool as passthrough mode lists it. */
  passthroughTools(): Tool[] {
    return this.catalog.entries().map((entry) => ({ ...entry.tool, name: entry.qualifiedName, description: `[${entry.server}] ${entry.tool.description ?? ""}`.trim() }) as Tool);
  }

  async close(): Promise<void> {
    if (this.#saveTimer) {
      clearTimeout(this.#saveTimer);
      this.#save();
    }
    await Promise.all([this.pool.close(), this.#sandbox?.close()]);
    this.results.clear();
  }

  #scheduleSave(): void {
    if (!this.#cache) return;
    clearTimeout(this.#saveTimer);
    this.#saveTimer = setTimeout(() => this.#save(), 500);
    this.#saveTimer.unref();
  }

  #save(): void {
    this.#saveTimer = undefined;
    const servers = new Map(this.catalog.servers().map((s) => [s, this.catalog.entries(s).map((e) => e.tool as Tool)]));
    try {
      this.#cache?.save(servers);
    } catch (error) {
      this.logger.warn(`could not write the catalog cache: ${(error as Error).message}`);
    }
  }

  #setServerTools(server: string, tools: Tool[]): void {
    this.catalog.setServerTools(server, tools as ToolDefinition[]);
    this.modules.setServer(server, this.catalog.entries(server).map(toCodegenTool));
    this.emit("toolsChanged");
  }
}

function toCodegenTool(entry: CatalogEntry): CodegenTool {
  const { tool } = entry;
  return {
    server: entry.server,
    name: entry.name,
    qualifiedName: entry.qualifiedName,
    functionName: entry.functionName,
    inputSchema: tool.inputSchema as Record<string, unknown>,
    ...(tool.title ? { title: tool.title } : {}),
    ...(tool.description ? { description: tool.description } : {}),
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
    ...(tool.annotations ? { annotations: tool.annotations as Record<string, unknown> } : {}),
  };
}
