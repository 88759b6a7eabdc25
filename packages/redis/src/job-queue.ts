import type { JobQueue } from "@codemux/core";
import type { Queue, WaitingError, Worker } from "bullmq";
import type { RedisConnection } from "./connection";

/** The queue's name under the deployment's prefix: `<prefix>queue:jobs:*`. */
const QUEUE_NAME = "jobs";

/**
 * The deployment's job queue on BullMQ. A job taken by an instance is never retried elsewhere
 * (`maxStalledCount: 0`): when its instance dies, its record says `interrupted`, and the queue drops it.
 * Queued jobs are removed once taken and ended, so the queue's keys hold only what waits or runs.
 */
export class RedisJobQueue implements JobQueue {
  readonly #redis: RedisConnection;
  readonly #queue: Queue;
  readonly #Worker: typeof Worker;
  readonly #WaitingError: typeof WaitingError;
  #worker: Worker | undefined;
  #hasRoom: () => boolean = () => false;
  #started = false;

  /** Loads BullMQ only here, so an instance on files never loads it. */
  static async open(redis: RedisConnection): Promise<RedisJobQueue> {
    const { Queue, Worker, WaitingError } = await import("bullmq");
    return new RedisJobQueue(redis, { Queue, Worker, WaitingError });
  }

  private constructor(redis: RedisConnection, classes: { Queue: typeof Queue; Worker: typeof Worker; WaitingError: typeof WaitingError }) {
    const { Queue: QueueClass, Worker: WorkerClass, WaitingError: WaitingErrorClass } = classes;
    this.#redis = redis;
    this.#Worker = WorkerClass;
    this.#WaitingError = WaitingErrorClass;
    this.#queue = new QueueClass(QUEUE_NAME, {
      // BullMQ asks Redis's version as it connects (so an offline queue); the store's 2 s bound still fails an add while Redis is down.
      connection: redis.client.duplicate({ enableOfflineQueue: true }),
      prefix: `${redis.prefix}queue`,
      skipWaitingForReady: true,
      defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 1 },
    });
    this.#queue.on("error", () => undefined);
  }

  async add(job: { id: string; payload: string }): Promise<void> {
    await this.#redis.run(`queue job ${job.id} in Redis`, () => this.#queue.add("job", { payload: job.payload }, { jobId: job.id }));
  }

  async remove(id: string): Promise<boolean> {
    // 1 when removed; 0 when locked (an instance took it) or already gone.
    return (await this.#redis.run(`take job ${id} out of the Redis queue`, () => this.#queue.remove(id))) === 1;
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
        maxStalledCount: 0,
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
