import { Catalog, type CatalogEntry, type ToolDefinition } from "@codemux/catalog";
import { ModuleTree, writeModuleTree, type CodegenTool } from "@codemux/codegen";
import { ServerPool, silentLogger, type Logger, type PoolConfig, type PoolOptions, type ServerStatus } from "@codemux/pool";
import { Sandbox, type ExecuteResult, type SandboxOptions } from "@codemux/sandbox";
import type { CallToolResult, Progress, Tool } from "@modelcontextprotocol/sdk/types.js";
import { EventEmitter } from "node:events";
import { ToolInvoker } from "./invoker";
import { formatSearch, type SearchRequest } from "./meta-tools/search";
import { ResultStore } from "./results";

export type Mode = "code" | "passthrough";

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
 * number of client sessions (`createServer()` makes the MCP server of one session).
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
    this.pool.on("tools", (server, tools) => this.#setServerTools(server, tools));
  }

  /** Connects every server in the background; `ready()` waits for them. */
  start(): void {
    void this.pool.start();
  }

  /** Waits (bounded) until every server has connected or failed; true when all settled in time. */
  ready(timeoutMs = this.#startupWaitMs): Promise<boolean> {
    return this.pool.settled(timeoutMs);
  }

  status(): ServerStatus[] {
    return this.pool.status();
  }

  /** Servers still connecting, for a note under answers given before they are all there. */
  pendingNote(): string[] {
    const pending = this.pool.status().filter((s) => s.state === "connecting").map((s) => s.name);
    return pending.length ? [`(still connecting: ${pending.join(", ")}; their tools are not listed yet)`] : [];
  }

  async searchTools(request: SearchRequest): Promise<string> {
    await this.ready();
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
    await Promise.all([this.pool.close(), this.#sandbox?.close()]);
    this.results.clear();
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
