import { INSTANCE_ID_PATTERN, type JobQueue, type RateBuckets, type RecordTable, type SharedLists, type SkillShelf, type Store } from "@codemux/core";
import type { ScaleOut } from "@codemux/http";
import { TERMINAL, type JobRecord } from "@codemux/jobs";
import {
  InstanceRegistry,
  RedisBuckets,
  RedisConnection,
  RedisForgetRequests,
  RedisJobQueue,
  RedisJobShare,
  RedisLists,
  RedisRecordTable,
  RedisSkillShelf,
  RedisSlots,
  RedisStore,
  RedisUrlError,
  parseStoreSetting,
  type StoreSetting,
} from "@codemux/redis";
import { randomBytes } from "node:crypto";
import { ConfigError } from "@codemux/pool";
import { RuntimeError } from "./errors";

/** `--store`, `--store-prefix`, `--instance-id`: the flags win over CODEMUX_STORE, CODEMUX_STORE_PREFIX, CODEMUX_INSTANCE_ID, which win over the config's `store`. */
export interface StoreFlags {
  store?: string;
  storePrefix?: string;
  instanceId?: string;
}

/** How long `serve` waits for Redis at start before serving without it (it keeps reconnecting). */
const FIRST_CONNECT_MS = 5_000;

/** Where this instance keeps what several instances share; all undefined on files (one instance, as always). */
export interface SharedState {
  setting: StoreSetting;
  instanceId: string;
  connection?: RedisConnection;
  resultStore?: Store;
  cacheStore?: Store;
  /** Token buckets every instance counts in: the rate-limit plugin's, and the policies' calls per minute. */
  rateBuckets?: RateBuckets;
  /** The cache plugin's entries. */
  pluginStore?: RedisStore;
  /** The pin plugin's pins and approvals. */
  pinRecords?: RecordTable;
  /** Saved skills, and the memory plugin's memories. */
  skillShelf?: SkillShelf;
  memories?: SharedLists;
  jobShare?: RedisJobShare;
  /** The places policies' concurrentJobs count, on every instance together. */
  jobSlots?: RedisSlots;
  /** Jobs waiting for room on any instance. */
  jobQueue?: JobQueue;
  registry?: InstanceRegistry;
  /** Asks to forget a principal, heard and answered by every running instance. */
  forgetRequests?: RedisForgetRequests;
  /** What the HTTP server is told: instance-scoped session ids, forwarding, the store's health. */
  scaleOut?: ScaleOut;
  close(): Promise<void>;
}

/** The store setting as given (flags, environment, the config's `store`), read but not yet connected. */
export function storeSettingOf(flags: StoreFlags, raw: Record<string, unknown> | undefined, configFile: string | undefined): StoreSetting {
  const fromConfig = configStore(raw, configFile);
  const url = flags.store ?? nonEmpty(process.env.CODEMUX_STORE) ?? fromConfig.url;
  const prefix = flags.storePrefix ?? nonEmpty(process.env.CODEMUX_STORE_PREFIX) ?? fromConfig.prefix;
  try {
    return parseStoreSetting(url, prefix);
  } catch (error) {
    if (RedisUrlError.isInstance(error)) throw new RuntimeError("SETTING_INVALID", error.message);
    throw error;
  }
}

/** Opens the shared state of the setting: nothing on files; on Redis one connection, its stores, and this instance's registration. */
export async function openSharedState(setting: StoreSetting, flags: StoreFlags): Promise<SharedState> {
  const instanceId = instanceIdOf(flags);
  if (setting.kind === "files")
    // One instance: its session ids carry an id only when one is asked for (a load balancer routing on it).
    return {
      setting,
      instanceId,
      ...(flags.instanceId !== undefined || process.env.CODEMUX_INSTANCE_ID ? { scaleOut: { instanceId } } : {}),
      close: async () => undefined,
    };
  const connection = await RedisConnection.open({ url: setting.url, prefix: setting.prefix });
  // Not reachable yet: the caller says so (serve goes on, since calls that need no shared state work).
  await connection.ready(FIRST_CONNECT_MS);
  const registry = new InstanceRegistry(connection, { id: instanceId });
  const jobShare = new RedisJobShare(connection, registry);
  const jobQueue = await RedisJobQueue.open(connection);
  const skillShelf = new RedisSkillShelf(connection);
  const forgetRequests = new RedisForgetRequests(connection, registry);
  return {
    setting,
    instanceId,
    connection,
    resultStore: new RedisStore(connection, { name: "results" }),
    cacheStore: new RedisStore(connection, { name: "cache" }),
    rateBuckets: new RedisBuckets(connection),
    pluginStore: new RedisStore(connection, { name: "plugin-cache" }),
    pinRecords: pinRecordsOf(connection),
    skillShelf,
    memories: new RedisLists(connection, { name: "memories" }),
    jobShare,
    jobSlots: new RedisSlots(connection),
    jobQueue,
    registry,
    forgetRequests,
    scaleOut: { instanceId, instances: registry, state: connection, sharedResults: true, taskOwner: (principal, id) => taskOwnerOf(jobShare, principal, id) },
    close: async () => {
      await registry.stop();
      await forgetRequests.close();
      await jobQueue.close();
      await jobShare.close();
      await skillShelf.close();
      await connection.close();
    },
  };
}

/** How long a one-shot command waits for Redis: a refusal ends the wait at once, silence at this bound. */
const ONE_SHOT_CONNECT_MS = 5_000;

/**
 * The store of a one-shot command (skills, approve, forget, store import): nothing on files; on Redis one
 * connection, checked at once (a Redis that refuses or does not answer is a RuntimeError, `unreachable` saying
 * what the command could not do), whose parts are made only as the command uses them: the job queue (BullMQ)
 * opens at its first use, and this process never registers as an instance.
 */
export async function openStoreClient(
  setting: StoreSetting,
  { unreachable, waitMs = ONE_SHOT_CONNECT_MS }: { unreachable: (where: string, reason: string) => string; waitMs?: number },
): Promise<SharedState> {
  const instanceId = instanceIdOf({});
  if (setting.kind === "files") return { setting, instanceId, close: async () => undefined };
  const connection = await RedisConnection.open({ url: setting.url, prefix: setting.prefix });
  const reason = await reachable(connection, waitMs);
  if (reason !== undefined) {
    await connection.close();
    throw new RuntimeError("STORE_UNREACHABLE", unreachable(connection.where, reason));
  }
  const made: Array<{ close(): Promise<void> }> = [];
  const parts = new Map<string, unknown>();
  const part = <T>(name: string, make: () => T): T => {
    if (!parts.has(name)) parts.set(name, make());
    return parts.get(name) as T;
  };
  const closing = <T extends { close(): Promise<void> }>(value: T): T => {
    made.unshift(value);
    return value;
  };
  const registry = () => part("registry", () => new InstanceRegistry(connection, { id: instanceId }));
  return {
    setting,
    instanceId,
    connection,
    get cacheStore() {
      return part("cache", () => new RedisStore(connection, { name: "cache" }));
    },
    get resultStore() {
      return part("results", () => new RedisStore(connection, { name: "results" }));
    },
    get pluginStore() {
      return part("plugin-cache", () => new RedisStore(connection, { name: "plugin-cache" }));
    },
    get pinRecords() {
      return part("pins", () => pinRecordsOf(connection));
    },
    get memories() {
      return part("memories", () => new RedisLists(connection, { name: "memories" }));
    },
    get skillShelf() {
      return part("skills", () => closing(new RedisSkillShelf(connection)));
    },
    get jobShare() {
      return part("job-share", () => closing(new RedisJobShare(connection, registry())));
    },
    get jobQueue() {
      return part("job-queue", () => closing(new LazyJobQueue(connection)));
    },
    get forgetRequests() {
      return part("forget", () => closing(new RedisForgetRequests(connection, registry())));
    },
    close: async () => {
      for (const value of made) await value.close();
      await connection.close();
    },
  };
}

/** Undefined once Redis answers; else why not: the first connection error (a refusal comes at once), or silence until `waitMs`. */
async function reachable(connection: RedisConnection, waitMs: number): Promise<string | undefined> {
  if (connection.up()) return undefined;
  const { client } = connection;
  return await new Promise<string | undefined>((resolve) => {
    const done = (reason: string | undefined) => {
      clearTimeout(timer);
      client.off("ready", onReady).off("error", onError);
      resolve(reason);
    };
    const onReady = () => done(undefined);
    const onError = (error: NodeJS.ErrnoException) => done((error.code ?? error.message).slice(0, 200));
    const timer = setTimeout(() => done(`no answer within ${waitMs} ms`), waitMs);
    client.on("ready", onReady).on("error", onError);
  });
}

/** The shared job queue for a one-shot command, which only ever takes a job out (forget): BullMQ is loaded and connected at that first use. */
class LazyJobQueue implements JobQueue {
  readonly #connection: RedisConnection;
  #queue: Promise<RedisJobQueue> | undefined;

  constructor(connection: RedisConnection) {
    this.#connection = connection;
  }

  #open(): Promise<RedisJobQueue> {
    this.#queue ??= RedisJobQueue.open(this.#connection);
    return this.#queue;
  }

  async add(job: { id: string; payload: string }): Promise<void> {
    await (await this.#open()).add(job);
  }

  async remove(id: string): Promise<boolean> {
    return await (await this.#open()).remove(id);
  }

  work(): void {
    throw new Error("a one-shot command takes no jobs from the shared queue");
  }

  roomChanged(): void {}

  async close(): Promise<void> {
    if (this.#queue) await (await this.#queue).close();
  }
}

/** The instance running `principal`'s unfinished job `id` by its shared record (a task's requests are forwarded there). */
async function taskOwnerOf(jobShare: RedisJobShare, principal: string, id: string): Promise<string | undefined> {
  const text = await jobShare.get(id);
  if (text === undefined) return undefined;
  const record = JSON.parse(text) as JobRecord;
  // Another principal's job is not routed; a finished one is answered from its shared record by any instance.
  return record.principal === principal && !TERMINAL.has(record.status) ? record.instance : undefined;
}

/** The pin plugin's shared pins and approvals, which `codemux approve` changes too. */
export function pinRecordsOf(connection: RedisConnection): RecordTable {
  return new RedisRecordTable(connection, { name: "pins" });
}

function instanceIdOf(flags: StoreFlags): string {
  const given = flags.instanceId ?? nonEmpty(process.env.CODEMUX_INSTANCE_ID);
  if (given === undefined) return randomBytes(4).toString("hex");
  if (!INSTANCE_ID_PATTERN.test(given))
    throw new RuntimeError(
      "SETTING_INVALID",
      `The instance id "${given.slice(0, 60)}" may hold lowercase letters, digits and "-" (1 to 40, starting with a letter or digit), e.g. codemux-1.`,
    );
  return given;
}

/** The config's `store`: a URL string, or `{ "url": ..., "prefix": ... }`. */
function configStore(raw: Record<string, unknown> | undefined, file: string | undefined): { url?: string; prefix?: string } {
  const value = raw?.store;
  if (value === undefined) return {};
  if (typeof value === "string") return { url: value };
  const object = value as { url?: unknown; prefix?: unknown };
  if (typeof value === "object" && value !== null && typeof object.url === "string" && (object.prefix === undefined || typeof object.prefix === "string"))
    return { url: object.url, ...(object.prefix !== undefined ? { prefix: object.prefix } : {}) };
  throw new ConfigError(`Invalid config ${file}: store: expected "files", a redis:// URL, or { "url": "redis://...", "prefix": "codemux:" }.`, {
    ...(file ? { file } : {}),
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}
