import type { JobQueue } from "@codemux/core";
import type { Queue, WaitingError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { RedisConnection } from "./connection";

/** The queue's name under the deployment's prefix: `<prefix>queue:jobs:*`. */
const QUEUE_NAME = "jobs";
/** How long an add waits for the queue's connection (the store's command bound). */
const ADD_WAIT_MS = 2_000;

/** How long a taken job's lock lasts without renewal (renewed at half of it), and how often locks that lapsed are looked for. */
export interface JobQueueTimes {
  /** 10 s by default. */
  lockMs?: number;
  /** 5 s by default. */
  stalledCheckMs?: number;
}

/**
 * The deployment's job queue on BullMQ. A job whose taker stops holding it (the process died, or
 * Redis was away longer than the lock) goes back to wait once (`maxStalledCount: 1`) for any
 * instance to take; the job manager's take checks the job's record, so a job that started is never
 * run again. Queued jobs are removed once taken and ended, so the queue's keys hold only what waits or runs.
 */
export class RedisJobQueue implements JobQueue {
  readonly #redis: RedisConnection;
  readonly #queue: Queue;
  readonly #Worker: typeof Worker;
  readonly #WaitingError: typeof WaitingError;
  #worker: Worker | undefined;
  #hasRoom: () => boolean = () => false;
  #started = false;
  readonly #connection: Pick<Redis, "status" | "once" | "off">;
  readonly #times: Required<JobQueueTimes>;

  /** Loads BullMQ only here, so an instance on files never loads it. */
  static async open(redis: RedisConnection, times: JobQueueTimes = {}): Promise<RedisJobQueue> {
    const { Queue, Worker, WaitingError } = await import("bullmq");
    return new RedisJobQueue(redis, { Queue, Worker, WaitingError }, times);
  }

  private constructor(
    redis: RedisConnection,
    classes: { Queue: typeof Queue; Worker: typeof Worker; WaitingError: typeof WaitingError },
    times: JobQueueTimes,
  ) {
    const { Queue: QueueClass, Worker: WorkerClass, WaitingError: WaitingErrorClass } = classes;
    this.#redis = redis;
    this.#Worker = WorkerClass;
    this.#WaitingError = WaitingErrorClass;
    this.#times = { lockMs: times.lockMs ?? 10_000, stalledCheckMs: times.stalledCheckMs ?? 5_000 };
    // BullMQ asks Redis's version as it connects (so an offline queue); `add` refuses while it is not connected.
    const connection = redis.client.duplicate({ enableOfflineQueue: true });
    this.#connection = connection;
    this.#queue = new QueueClass(QUEUE_NAME, {
      connection,
      prefix: `${redis.prefix}queue`,
      skipWaitingForReady: true,
      defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 1 },
    });
    this.#queue.on("error", () => undefined);
  }

  async add(job: { id: string; payload: string }): Promise<void> {
    await this.#redis.run(
      `queue job ${job.id} in Redis`,
      async () => {
        // An add held in the offline queue would be sent once Redis is back, after its caller was told it failed and ran the job itself.
        if (!(await this.#connected())) throw new Error("not connected");
        return this.#queue.add("job", { payload: job.payload }, { jobId: job.id });
      },
      { name: "redis queue job", attributes: { "db.operation.name": "queue job", "codemux.job": job.id } },
    );
  }

  /** Whether the queue's connection is up, waiting for it (a new one, or one reconnecting) as long as a command may take. */
  async #connected(): Promise<boolean> {
    const connection = this.#connection;
    if (connection.status === "ready") return true;
    return await new Promise<boolean>((resolve) => {
      const onReady = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        connection.off("ready", onReady);
        resolve(false);
      }, ADD_WAIT_MS);
      connection.once("ready", onReady);
    });
  }

  async remove(id: string): Promise<boolean> {
    // BullMQ answers 0 for a job an instance holds, and 1 for one it removed or no longer has (taken, run and removed once
    // ended): only a job still here counts. One taken and ended between the two commands (a round trip) would count too.
    return await this.#redis.run(
      `take job ${id} out of the Redis queue`,
      async (client) => (await client.exists(this.#queue.toKey(id))) === 1 && (await this.#queue.remove(id)) === 1,
      { name: "redis take job", attributes: { "db.operation.name": "take job", "codemux.job": id } },
    );
  }

  work(options: { concurrency: number; hasRoom: () => boolean; run: (id: string, payload: string) => Promise<void> }): void {
    this.#hasRoom = options.hasRoom;
    this.#worker = new this.#Worker(
      QUEUE_NAME,
      async (job, token) => {
        // A worker waiting on Redis when this instance filled up still takes the next job: it goes back for an instance with room.
        if (!this.#hasRoom()) {
          await job.moveToWait(token);
          this.roomChanged();
          throw new this.#WaitingError();
        }
        await options.run(String(job.id), String((job.data as { payload?: unknown }).payload ?? ""));
      },
      {
        // Blocking reads wait longer than the store's 2 s command bound, and BullMQ retries them itself.
        connection: this.#redis.client.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true, commandTimeout: undefined }),
        prefix: `${this.#redis.prefix}queue`,
        concurrency: options.concurrency,
        maxStalledCount: 1,
        lockDuration: this.#times.lockMs,
        stalledInterval: this.#times.stalledCheckMs,
        autorun: false,
      },
    );
    this.#worker.on("error", () => undefined);
    this.roomChanged();
  }

  roomChanged(): void {
    const worker = this.#worker;
    if (!worker) return;
    const room = this.#hasRoom();
    // The worker starts taking only once there is room: an instance born full takes nothing.
    if (room && !this.#started) {
      this.#started = true;
      void worker.run().catch(() => undefined);
    } else if (!room && this.#started && !worker.isPaused()) void worker.pause(true).catch(() => undefined);
    else if (room && worker.isPaused()) void worker.resume();
  }

  async close(): Promise<void> {
    await this.#worker?.close(true).catch(() => undefined);
    await this.#queue.close().catch(() => undefined);
  }
}
