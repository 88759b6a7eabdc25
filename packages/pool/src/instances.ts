import type { DownstreamNotification } from "./channel";
import type { ServerSpec } from "./config/types";
import { ServerConnection, type CallerSession, type ConnectionOptions, type InstanceOwner } from "./connection";
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
  #made = 0;
  #closed = false;

  constructor(options: InstanceSetOptions) {
    this.#options = options;
    // Lazy, so that an instance goes idle after idleStopMs unused; going idle ends it (below).
    this.#spec = { ...options.spec, lazy: true, idleStopMs: options.spec.idleStopMs ?? options.connection.idleStopMs ?? DEFAULT_IDLE_STOP_MS };
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
    if (this.#closed || this.#instances.size >= limit)
      throw new InstanceLimitError(this.#spec.name, limit, { per: perSession ? "session" : "principal", idleStopMs: this.#spec.idleStopMs as number });
    const owner: InstanceOwner = perSession ? { principal: session.principal, session: session.id } : { principal: session.principal };
    const instance = new ServerConnection(this.#spec, { ...this.#options.connection, deferStart: undefined, owner }, `${this.#options.alias}.${++this.#made}`);
    instance.on("notification", (notification) => this.#options.onNotification(notification, owner));
    instance.on("state", ({ state }) => {
      // Idle (unused) or failed: the slot is freed at once; the owner's next call starts a fresh instance.
      if ((state === "idle" || state === "failed") && this.#instances.get(key) === instance) void this.#forget(key, instance);
    });
    this.#instances.set(key, instance);
    return instance;
  }

  /** Ends the instance of one client session (when that session ends). */
  async closeSession(session: string): Promise<void> {
    const instance = this.#spec.isolation === "session" ? this.#instances.get(session) : undefined;
    if (instance) await this.#forget(session, instance);
  }

  /** Ends every instance, in any state (shutdown, or the entry was removed or changed). */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#instances].map(([key, instance]) => this.#forget(key, instance)));
  }

  async #forget(key: string, instance: ServerConnection): Promise<void> {
    this.#instances.delete(key);
    instance.removeAllListeners();
    await instance.close();
  }
}
