import type { ToolResult } from "@codemux/core";
import type { Tool } from "@modelcontextprotocol/client";
import { EventEmitter } from "node:events";
import type { PoolConfig, ServerSpec } from "./config/types";
import type { LoginCallbacks } from "./auth/login-callbacks";
import { authDirectory, deletePrincipalLogins } from "./auth/store";
import type { CallerSession, DownstreamClient, DownstreamNotification, DownstreamRequest } from "./channel";
import { ServerConnection, type CallOptions, type ConnectionOptions, type InstanceOwner, type ServerStatus } from "./connection";
import { NoSessionError, ServerNotFoundError } from "./errors";
import { InstanceSet } from "./instances";

export type PoolOptions = ConnectionOptions;

interface PoolEvents {
  state: [ServerStatus];
  tools: [server: string, tools: Tool[]];
  /** A server left the pool (`update` without it). */
  removed: [server: string];
  /** A server's logging message, resource or prompt change, to pass on to clients; `owner` is set when it came from an isolated server's instance. */
  notification: [server: string, notification: DownstreamNotification, owner?: InstanceOwner];
}

/** What `update` did, by server name. */
export interface PoolUpdate {
  added: string[];
  removed: string[];
  changed: string[];
}

/**
 * All downstream servers: connected in parallel, each failing alone, called by name.
 * @example
 * const pool = new ServerPool(await loadConfigFile("codemux.json"), { logger });
 * void pool.start();
 * if (await pool.waitFor("fs", 5_000)) await pool.callTool("fs", "read_text_file", { path: "README.md" });
 */
export class ServerPool extends EventEmitter<PoolEvents> {
  /** One connection per server; for an isolated server, its listing connection (tools, resources, prompts), which serves no calls. */
  readonly #connections = new Map<string, ServerConnection>();
  /** The instances of each isolated server, by server name. */
  readonly #instances = new Map<string, InstanceSet>();
  readonly #aliases = new Map<string, string>();
  #started: Promise<void> | undefined;
  #loginCallbacks: LoginCallbacks | undefined;

  constructor(
    config: PoolConfig | ServerSpec[],
    readonly options: PoolOptions = {},
  ) {
    super();
    this.setMaxListeners(0);
    for (const spec of Array.isArray(config) ? config : config.servers) this.#add(spec);
  }

  /**
   * Applies a new list of servers (a reloaded config): servers no longer listed are closed, new ones
   * connected, and ones whose spec changed in any way restarted; unchanged servers keep their connection.
   */
  async update(specs: readonly ServerSpec[]): Promise<PoolUpdate> {
    const next = new Map(specs.map((spec) => [spec.name, spec]));
    const removed = this.names.filter((name) => !next.has(name));
    const changed = this.names.filter((name) => next.has(name) && JSON.stringify(next.get(name)) !== JSON.stringify(this.#connections.get(name)?.spec));
    const added = [...next.keys()].filter((name) => !this.#connections.has(name));
    await Promise.all([...removed, ...changed].map((name) => this.#remove(name)));
    for (const name of removed) this.emit("removed", name);
    for (const name of [...changed, ...added]) {
      const connection = this.#add(next.get(name) as ServerSpec);
      if (this.#started) void connection.start();
    }
    return { added, removed, changed };
  }

  /** Stops one server (its process, its isolated instances) and starts it again from the same entry: the admin page's restart. */
  async restart(name: string): Promise<void> {
    const { spec } = this.connection(name);
    const restarts = this.connection(name).status().restarts;
    const order = this.names;
    await this.#remove(name);
    const connection = this.#add(spec);
    connection.carryRestarts(restarts + 1);
    // The server keeps its place in the list (status, `codemux list`): the map is rebuilt in the old order.
    for (const other of order) {
      const kept = this.#connections.get(other) as ServerConnection;
      this.#connections.delete(other);
      this.#connections.set(other, kept);
    }
    if (this.#started) void connection.start();
  }

  async #remove(name: string): Promise<void> {
    const connection = this.#connections.get(name) as ServerConnection;
    const instances = this.#instances.get(name);
    this.#connections.delete(name);
    this.#instances.delete(name);
    connection.removeAllListeners();
    await Promise.all([connection.close(), instances?.close()]);
  }

  #add(spec: ServerSpec): ServerConnection {
    // A server keeps its alias across reloads; a new name takes the next one, never a freed one.
    let alias = this.#aliases.get(spec.name);
    if (alias === undefined) this.#aliases.set(spec.name, (alias = `c${this.#aliases.size + 1}`));
    const connection = new ServerConnection(spec, this.options, alias);
    connection.on("state", (status) => this.emit("state", status));
    connection.on("tools", (tools) => this.emit("tools", spec.name, tools));
    connection.on("notification", (notification) => this.emit("notification", spec.name, notification));
    this.#connections.set(spec.name, connection);
    // The catalog must be known before anyone calls and must not be one owner's view: it comes from the listing connection above.
    if (spec.isolation)
      this.#instances.set(
        spec.name,
        new InstanceSet({
          spec,
          connection: this.options,
          alias,
          onNotification: (notification, owner) => this.emit("notification", spec.name, notification, owner),
          loginCallbacks: () => this.#loginCallbacks,
        }),
      );
    return connection;
  }

  /**
   * Sends the browsers of per-principal logins started from now on back to `callbacks` (codemux's public HTTP route)
   * rather than to a loopback listener a remote principal cannot reach; `undefined` goes back to the loopback.
   */
  useLoginCallbacks(callbacks: LoginCallbacks | undefined): void {
    this.#loginCallbacks = callbacks;
  }

  /** Connects every server at once; resolves when each is ready, failed or skipped. Never rejects. */
  start(): Promise<void> {
    this.#started ??= Promise.all([...this.#connections.values()].map((c) => c.start())).then(() => undefined);
    return this.#started;
  }

  /** Waits until no server is still connecting for the first time, or `timeoutMs` passes. Resolves true when settled. */
  async settled(timeoutMs: number): Promise<boolean> {
    const done = this.start().then(() => true);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([done, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Waits for one server only: true once it is ready, failed or skipped (starting it if needed),
   * false when `timeoutMs` passes first. Other servers, however slow, do not hold it up.
   */
  waitFor(server: string, timeoutMs: number): Promise<boolean> {
    return this.connection(server).waitSettled(timeoutMs);
  }

  get names(): string[] {
    return [...this.#connections.keys()];
  }

  status(): ServerStatus[] {
    return [...this.#connections.values()].map((c) => {
      const instances = this.#instances.get(c.name);
      if (!instances) return c.status();
      const { isolation, credentials } = instances.spec;
      return { ...c.status(), isolation, instances: instances.size, ...(credentials ? { credentials } : {}) };
    });
  }

  connection(name: string): ServerConnection {
    const connection = this.#connections.get(name);
    if (!connection) throw new ServerNotFoundError(name, this.names);
    return connection;
  }

  /**
   * One server's connected SDK client (connecting it now if it is down), for requests beyond tools: resources,
   * prompts, completions. For an isolated server: `session`'s own instance, else the listing connection, except for
   * a server with per-principal credentials, whose listing connection (the operator's) lists tools only.
   */
  client(server: string, session?: CallerSession): Promise<DownstreamClient> {
    try {
      const connection = this.connection(server);
      const instances = this.#instances.get(server);
      if (session === undefined && instances?.spec.credentials === "per-principal") throw new NoSessionError(server);
      return instances && session ? instances.client(session) : connection.ensureReady();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * One request other than a tool call (`prompts/get`, `resources/read`, `completion/complete`), made for
   * `options.session` (an isolated server's: on that session's own instance). A question the server sends on
   * its stream is relayed as that caller's; with `options.inputRequired`, a 2026 server's `input_required` is the answer.
   */
  request(server: string, request: DownstreamRequest, options: CallOptions = {}): Promise<Record<string, unknown>> {
    try {
      const connection = this.connection(server);
      const instances = options.session === undefined ? undefined : this.#instances.get(server);
      return instances ? instances.request(request, options as CallOptions & { session: CallerSession }) : connection.request(request, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Every ready server's (filtered) tools. */
  tools(): Array<{ server: string; tools: Tool[] }> {
    return [...this.#connections.values()].map((c) => ({ server: c.name, tools: c.tools }));
  }

  /** Calls one server's tool; it waits for that server alone (see `CallOptions.annotations` for retries). */
  callTool(server: string, tool: string, args?: Record<string, unknown>, options?: CallOptions): Promise<ToolResult> {
    // Not async: an async wrapper returning the connection's promise costs two more microtask turns per call.
    const connection = this.#connections.get(server);
    if (!connection) return Promise.reject(new ServerNotFoundError(server, this.names));
    if (connection.spec.isolation === undefined) return connection.callTool(tool, args, options);
    return this.#isolatedCall(server, tool, args, options);
  }

  #isolatedCall(server: string, tool: string, args: Record<string, unknown> | undefined, options: CallOptions | undefined): Promise<ToolResult> {
    if (!options?.session) return Promise.reject(new NoSessionError(server));
    try {
      return (this.#instances.get(server) as InstanceSet).call(tool, args, options as CallOptions & { session: CallerSession });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** A client session's roots changed: the isolated servers' instances that take their roots from it are told; shared servers never are. */
  rootsChanged(session: CallerSession): void {
    for (const instances of this.#instances.values()) instances.rootsChanged(session);
  }

  /** Ends what one client session owned: its instances of servers isolated per session. */
  async closeSession(session: string): Promise<void> {
    await Promise.all([...this.#instances.values()].map((instances) => instances.closeSession(session)));
  }

  /**
   * Forgets `principal` (`codemux forget`): ends its instances of isolated servers and deletes the folders they kept
   * for it (`ownFolder`), and its own logins (servers with per-principal credentials), whichever servers they were for.
   * Resolves with how many logins and server folders went.
   */
  async forgetPrincipal(principal: string): Promise<{ logins: number; serverFolders: number }> {
    const folders = await Promise.all([...this.#instances.values()].map((instances) => instances.closePrincipal(principal)));
    const logins = await deletePrincipalLogins(await authDirectory(this.options.env ?? process.env), principal);
    return { logins, serverFolders: folders.filter(Boolean).length };
  }

  /** Closes every server in every state, and every isolated server's instances, ending stdio servers' whole process groups. */
  async close(): Promise<void> {
    await Promise.all([...[...this.#connections.values()].map((c) => c.close()), ...[...this.#instances.values()].map((i) => i.close())]);
  }
}
