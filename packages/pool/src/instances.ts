import { silentLogger, type ToolResult } from "@codemux/core";
import { existsSync, mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { AuthRequiredError } from "./auth/auth-required";
import type { LoginCallbacks } from "./auth/login-callbacks";
import { PrincipalLogins } from "./auth/principal-logins";
import { principalAuthDirectory } from "./auth/store";
import type { CallerSession, DownstreamClient, DownstreamNotification, DownstreamRequest } from "./channel";
import { oauthSettingsOf } from "./config/oauth-settings";
import type { ServerSpec, TransportSpec } from "./config/types";
import { ServerConnection, type CallOptions, type ConnectionOptions, type InstanceOwner } from "./connection";
import { DEFAULT_IDLE_STOP_MS, DEFAULT_MAX_INSTANCES } from "./defaults";
import { InstanceLimitError } from "./errors";

export interface InstanceSetOptions {
  /** The isolated server's entry (`isolation` set). */
  spec: ServerSpec;
  connection: ConnectionOptions;
  /** The listing connection's alias; instances are `<alias>.<n>`. */
  alias: string;
  /** A log line, resource or prompt change from one owner's instance. */
  onNotification: (notification: DownstreamNotification, owner: InstanceOwner) => void;
  /** codemux's public login callback route, once its HTTP server provides one. */
  loginCallbacks?: () => LoginCallbacks | undefined;
}

/**
 * The instances of one isolated server: one connection per principal or per client session, made at
 * that owner's first call, stopped and forgotten once unused for `idleStopMs` (or failed), at most
 * `maxInstances` at once. An instance is only ever handed to its owner: past the bound a new owner is
 * refused, never given another's.
 */
export class InstanceSet {
  readonly #instances = new Map<string, ServerConnection>();
  readonly #options: InstanceSetOptions;
  readonly #spec: ServerSpec;
  /** The logins a principal starts by calling without one: an HTTP server with per-principal credentials only. */
  readonly #logins: PrincipalLogins | undefined;
  #made = 0;
  #closed = false;

  constructor(options: InstanceSetOptions) {
    this.#options = options;
    const { spec } = options;
    // Lazy, so that an instance goes idle after idleStopMs unused; going idle ends it (below).
    this.#spec = { ...spec, lazy: true, idleStopMs: spec.idleStopMs ?? options.connection.idleStopMs ?? DEFAULT_IDLE_STOP_MS };
    if (spec.credentials === "per-principal" && spec.transport.type !== "stdio")
      this.#logins = new PrincipalLogins({
        server: spec.name,
        url: spec.transport.url,
        settings: oauthSettingsOf(spec.transport),
        // At most one login per instance (one at a time on a fixed loopback port: PrincipalLogins decides per login).
        limit: spec.maxInstances ?? DEFAULT_MAX_INSTANCES,
        env: options.connection.env ?? process.env,
        logger: options.connection.logger ?? silentLogger,
        ...(options.loginCallbacks ? { callbacks: options.loginCallbacks } : {}),
      });
  }

  get spec(): ServerSpec {
    return this.#options.spec;
  }

  /** How many instances run (or start) now. */
  get size(): number {
    return this.#instances.size;
  }

  /** The instance of `session`'s principal or session, made now if it has none; throws InstanceLimitError past the bound. */
  for(session: CallerSession): ServerConnection {
    const perSession = this.#spec.isolation === "session";
    const key = perSession ? session.id : session.principal;
    const known = this.#instances.get(key);
    if (known) return known;
    const limit = this.#spec.maxInstances ?? DEFAULT_MAX_INSTANCES;
    const what = { per: perSession ? ("session" as const) : ("principal" as const), idleStopMs: this.#spec.idleStopMs as number };
    if (this.#closed || this.#instances.size >= limit) throw new InstanceLimitError(this.#spec.name, limit, what);
    // Per session, one principal's many sessions must not take every slot: a quarter of them at most (at least 2), as with HTTP sessions.
    const share = Math.max(2, Math.ceil(limit / 4));
    if (perSession && this.#heldBy(session.principal) >= share)
      throw new InstanceLimitError(this.#spec.name, limit, { ...what, principal: session.principal, share });
    const owner: InstanceOwner = perSession ? { principal: session.principal, session: session.id } : { principal: session.principal };
    const spec = { ...this.#spec, transport: this.#transportOf(session.principal) };
    const instance = new ServerConnection(spec, { ...this.#options.connection, deferStart: undefined, owner }, `${this.#options.alias}.${++this.#made}`);
    instance.on("notification", (notification) => this.#options.onNotification(notification, owner));
    instance.on("state", ({ state }) => {
      // Idle (unused) or failed: the slot is freed at once; the owner's next call starts a fresh instance.
      if ((state === "idle" || state === "failed") && this.#instances.get(key) === instance) void this.#forget(key, instance);
    });
    this.#instances.set(key, instance);
    return instance;
  }

  /** Calls a tool on `session`'s instance. */
  call(tool: string, args: Record<string, unknown> | undefined, options: CallOptions & { session: CallerSession }): Promise<ToolResult> {
    return this.#withLogin(options.session, this.for(options.session).callTool(tool, args, options));
  }

  /** A request other than a tool call on `session`'s instance. */
  request(request: DownstreamRequest, options: CallOptions & { session: CallerSession }): Promise<Record<string, unknown>> {
    return this.#withLogin(options.session, this.for(options.session).request(request, options));
  }

  /** `session`'s instance's SDK client (resources, prompts, completions), connecting it now. */
  client(session: CallerSession): Promise<DownstreamClient> {
    return this.#withLogin(session, this.for(session).ensureReady());
  }

  /** With per-principal credentials over HTTP, a principal without a login of its own is sent the URL of one started for it, in the error's words. */
  #withLogin<T>(session: CallerSession, work: Promise<T>): Promise<T> {
    const logins = this.#logins;
    if (!logins) return work;
    return work.catch(async (error: unknown) => {
      if (!AuthRequiredError.isInstance(error)) throw error;
      const url = await logins.start(session.principal);
      throw new AuthRequiredError(this.#spec.name, `${session.principal} has no login of its own to it, or it expired`, {
        how: `open ${url.href} in a browser to log in as yourself (within 5 minutes), then call again`,
        cause: error,
      });
    });
  }

  /** The principal's own transport: its credentials (below), and the path of its own folder when the entry asks for one. */
  #transportOf(principal: string): TransportSpec {
    const transport = this.#credentialsOf(principal);
    const own = this.#spec.ownFolder;
    if (!own || transport.type !== "stdio") return transport;
    const folder = principalAuthDirectory(own.under, principal);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    return { ...transport, env: { ...transport.env, [own.env]: own.file ? join(folder, own.file) : folder } };
  }

  /** The entry's transport, with the principal's `perPrincipal` env or headers over the entry's when its credentials are per principal. */
  #credentialsOf(principal: string): TransportSpec {
    const { transport, credentials, perPrincipal, name } = this.#spec;
    if (credentials !== "per-principal") return transport;
    const own = perPrincipal?.[principal];
    if (transport.type !== "stdio") {
      // The entry's Authorization is the operator's, for the listing connection: a principal sends its own, or logs in itself.
      const entry = Object.fromEntries(Object.entries(transport.headers).filter(([header]) => header.toLowerCase() !== "authorization"));
      const headers = { ...entry, ...own?.headers };
      const operators = Object.keys(transport.headers).length > Object.keys(entry).length;
      if (operators && !Object.keys(headers).some((header) => header.toLowerCase() === "authorization"))
        throw new AuthRequiredError(name, `${principal} has no credentials of its own for it`, {
          how: `the operator adds them to its entry under "perPrincipal": { "${principal}": { "headers": { "Authorization": ... } } }`,
        });
      return { ...transport, headers };
    }
    // A stdio server takes its secrets from its environment only: without the principal's own, it does not run as anyone.
    if (!own?.env)
      throw new AuthRequiredError(name, `${principal} has no credentials of its own for it`, {
        how: `the operator adds them to its entry under "perPrincipal": { "${principal}": { "env": { ... } } }`,
      });
    return { ...transport, env: { ...transport.env, ...own.env } };
  }

  /** Tells the instance that `session`'s roots reach (its own, or its principal's) that they changed. */
  rootsChanged(session: CallerSession): void {
    this.#instances.get(this.#spec.isolation === "session" ? session.id : session.principal)?.notifyRootsChanged();
  }

  /** How many instances `principal`'s sessions hold. */
  #heldBy(principal: string): number {
    let held = 0;
    for (const instance of this.#instances.values()) if (instance.options.owner?.principal === principal) held++;
    return held;
  }

  /** Ends the instance of one client session (when that session ends). */
  async closeSession(session: string): Promise<void> {
    const instance = this.#spec.isolation === "session" ? this.#instances.get(session) : undefined;
    if (instance) await this.#forget(session, instance);
  }

  /**
   * Forgets `principal` (`codemux forget`): ends every instance it owns (its own, or its sessions'), which run with its
   * credentials and hold its state, then deletes its own folder (`ownFolder`), what the server kept for it. True when there was one.
   */
  async closePrincipal(principal: string): Promise<boolean> {
    const owned = [...this.#instances].filter(([, instance]) => instance.options.owner?.principal === principal);
    await Promise.all(owned.map(([key, instance]) => this.#forget(key, instance)));
    const own = this.#spec.ownFolder;
    if (!own) return false;
    const folder = principalAuthDirectory(own.under, principal);
    const there = existsSync(folder);
    await rm(folder, { recursive: true, force: true });
    return there;
  }

  /** Ends every instance, in any state (shutdown, or the entry was removed or changed). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#logins?.close();
    await Promise.all([...this.#instances].map(([key, instance]) => this.#forget(key, instance)));
  }

  async #forget(key: string, instance: ServerConnection): Promise<void> {
    this.#instances.delete(key);
    instance.removeAllListeners();
    await instance.close();
  }
}
