import type { CallContext, CatalogEntry, ClientPeer, ToolResult } from "@codemux/core";
import { randomUUID } from "node:crypto";
import { CannotWrapError, HooksError } from "./errors";
import { sdkInternals } from "./sdk-internals";
import { PluginHost, type PluginHostOptions } from "./host";
import type { Plugin, ToolInfo } from "./types";

export interface WrapOptions extends PluginHostOptions {
  plugins: Plugin[];
  /** The server part of `server__tool` that plugins see (globs, audit lines, pins); the server's own name by default. */
  name?: string;
}

interface RawRequest {
  method: string;
  params?: { name?: unknown; arguments?: unknown; task?: unknown; [key: string]: unknown };
  [key: string]: unknown;
}
/** A handler's second argument: SDK 1.x's `extra` (`signal`, `authInfo`) or SDK v2's context (`mcpReq.signal`, `http.authInfo`). */
interface RawExtra {
  signal?: AbortSignal;
  sessionId?: string;
  authInfo?: { clientId?: string };
  mcpReq?: { signal?: AbortSignal };
  http?: { authInfo?: { clientId?: string } };
  [key: string]: unknown;
}

/** The low-level server of either SDK line (1.x `Server`, v2 `Server`), as far as the wrapper uses it. */
export interface WrappableServer {
  setRequestHandler(...args: never[]): unknown;
  close(): Promise<void>;
  getClientCapabilities(): object | undefined;
  elicitInput(...args: never[]): Promise<unknown>;
  createMessage(...args: never[]): Promise<unknown>;
  listRoots(...args: never[]): Promise<unknown>;
}
/** An `McpServer` of either SDK line: its low-level server is `server`. */
export interface WrappableMcpServer {
  readonly server: WrappableServer;
  registerTool(...args: never[]): unknown;
}
type RawHandler = (request: RawRequest, extra: RawExtra) => Promise<unknown>;

const WRAPPED: unique symbol = Symbol.for("codemux.hooks.wrapped");

/**
 * Runs `plugins` around every tool call of an existing SDK server, `McpServer` or low-level
 * `Server`, for tools registered before or after wrapping; nothing else about the server changes
 * (resources, prompts, capabilities, transport). Returns the same server once the plugins started;
 * closing the server closes them.
 *
 * @example
 * const server = new McpServer({ name: "billing", version: "1.0.0" });
 * server.registerTool("invoice", { inputSchema: { id: z.string() } }, handler);
 * await wrapWithProxy(server, { plugins: [auditPlugin({ file: "audit.jsonl" }), cachePlugin()] });
 * await server.connect(new StdioServerTransport());
 */
export async function wrapWithProxy<S extends WrappableMcpServer | WrappableServer>(server: S, options: WrapOptions): Promise<S> {
  const low = lowLevel(server);
  const marked = low as unknown as { [WRAPPED]?: boolean };
  if (marked[WRAPPED]) throw new CannotWrapError("wrapWithProxy: this server is already wrapped; pass all plugins in one call.");
  const { handlers, serverName: ownName } = sdkInternals<RawHandler>(low);
  const host = new PluginHost(options.plugins, options);
  await host.start();
  marked[WRAPPED] = true;

  const tools = new ListedTools(handlers);
  const caller = { serverName: sanitize(options.name ?? ownName ?? "server"), sessionId: randomUUID(), peer: peerOf(low) };
  const wrap = (raw: RawHandler) => wrapCall(raw, { host, tools, caller });
  const set = handlers.set.bind(handlers);
  // McpServer installs its tools/call handler on the first registerTool, maybe after wrapping: catch it there.
  handlers.set = (method: string, handler: RawHandler) => set(method, method === "tools/call" ? wrap(handler) : handler);
  const existing = handlers.get("tools/call");
  if (existing) set("tools/call", wrap(existing));
  forgetOnListChange(server, low, () => tools.forget());
  const close = low.close.bind(low);
  low.close = async () => {
    await close();
    await host.close();
  };
  return server;
}

/** The server's tool definitions as its own tools/list answers, read again once the list changed. */
class ListedTools {
  readonly #definitions = new Map<string, ToolInfo>();
  #listed = false;

  constructor(readonly handlers: Map<string, RawHandler>) {}

  async of(tool: string, extra: RawExtra): Promise<ToolInfo | undefined> {
    if (!this.#definitions.has(tool) || !this.#listed) {
      const list = this.handlers.get("tools/list");
      if (list) {
        try {
          const answer = (await list({ method: "tools/list", params: {} }, extra)) as { tools?: ToolInfo[] };
          this.#definitions.clear();
          for (const t of answer.tools ?? []) this.#definitions.set(t.name, t);
          this.#listed = true;
        } catch {
          // Without a definition the call still runs; plugins see `{}` annotations.
        }
      }
    }
    return this.#definitions.get(tool);
  }

  forget(): void {
    this.#listed = false;
  }
}

/** Who calls, as the plugins see it: the server's name in `server__tool`, the session a request without one gets, the client. */
interface Caller {
  serverName: string;
  sessionId: string;
  peer: ClientPeer;
}

/** A tools/call handler with the plugins' chain around it. */
function wrapCall(raw: RawHandler, { host, tools, caller }: { host: PluginHost; tools: ListedTools; caller: Caller }): RawHandler {
  return async (request, extra) => {
    const params = request.params ?? {};
    // Task-augmented calls answer with a task, not a result: they pass as they are.
    if (params.task !== undefined || host.chain.empty) return raw(request, extra);
    const tool = String(params.name);
    const definition = await tools.of(tool, extra);
    try {
      return await host.chain.run(
        callContext({ tool, definition, params, extra }, caller),
        async (call) => (await raw({ ...request, params: { ...params, arguments: call.arguments } }, extra)) as ToolResult,
        definition,
      );
    } catch (error) {
      // A refusal is an answer the model can read, as codemux gives it, not a protocol error.
      if (HooksError.isInstance(error)) return { content: [{ type: "text", text: error.message }], isError: true } satisfies ToolResult;
      throw error;
    }
  };
}

/** The call as the plugins' chain takes it. */
function callContext(
  { tool, definition, params, extra }: { tool: string; definition: ToolInfo | undefined; params: NonNullable<RawRequest["params"]>; extra: RawExtra },
  { serverName, sessionId, peer }: Caller,
): CallContext {
  return {
    entry: {
      qualifiedName: `${serverName}__${tool}`,
      server: serverName,
      name: tool,
      functionName: tool,
      moduleSpecifier: "",
      signature: "",
      summary: "",
      tool: definition ?? { name: tool, inputSchema: { type: "object" } },
    } as CatalogEntry,
    annotations: definition?.annotations ?? {},
    arguments: isObject(params.arguments) ? params.arguments : {},
    origin: "call_tool",
    session: { id: extra.sessionId ?? sessionId, principal: (extra.authInfo ?? extra.http?.authInfo)?.clientId ?? "local", peer },
    signal: extra.signal ?? extra.mcpReq?.signal,
    progress: undefined,
    timeoutMs: undefined,
    job: undefined,
    requestId: undefined,
    state: new Map(),
  };
}

/** Calls `forget` whenever the tool list changes: a list-changed notification, or a tool registered (even before a client is connected). */
function forgetOnListChange(server: WrappableMcpServer | WrappableServer, low: WrappableServer, forget: () => void): void {
  for (const target of [low, server] as Array<{ sendToolListChanged?: () => unknown }>) {
    const send = target.sendToolListChanged?.bind(target);
    if (send) target.sendToolListChanged = () => (forget(), send());
  }
  const mcp = server as unknown as { registerTool?: (...args: unknown[]) => unknown; tool?: (...args: unknown[]) => unknown };
  for (const method of ["registerTool", "tool"] as const) {
    const original = mcp[method]?.bind(server);
    if (original && low !== (server as unknown)) mcp[method] = (...args: unknown[]) => (forget(), original(...args));
  }
}

function lowLevel(server: WrappableMcpServer | WrappableServer): WrappableServer {
  const inner = (server as { server?: unknown }).server;
  if (inner && typeof (inner as WrappableServer).setRequestHandler === "function" && typeof (server as WrappableMcpServer).registerTool === "function")
    return inner as WrappableServer;
  return server as WrappableServer;
}

function peerOf(server: WrappableServer): ClientPeer {
  return {
    capabilities: () => server.getClientCapabilities() as ReturnType<ClientPeer["capabilities"]>,
    // Relayed as the plugin built it: the SDK validates it on the way out.
    elicit: (params, options) => server.elicitInput(params as never, (options?.signal ? { signal: options.signal } : undefined) as never) as never,
    createMessage: (params, options) => server.createMessage(params as never, (options?.signal ? { signal: options.signal } : undefined) as never) as never,
    listRoots: (options) => server.listRoots(undefined as never, (options?.signal ? { signal: options.signal } : undefined) as never) as never,
  };
}

function sanitize(name: string): string {
  return name.replace(/[^A-Za-z0-9-]+/g, "-").replace(/^-+|-+$/g, "") || "server";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
