import type { JobRunner, JobShare, Logger, MetaTool, SessionInfo, SharedSlots, TaskStore, ToolCallMiddleware } from "@codemux/core";
import { join } from "node:path";
import { agentMetaTool } from "./agent";
import { JobManager, type JobLimits, type JournalRedactor, type RecoveryReport } from "./job-manager";
import { jobsMetaTool } from "./meta-tools";
import type { TaskStoreOptions } from "./task-options";
import type { TaskQuestionBoard } from "./task-extension";
import { jobTaskStore } from "./task-store";

export interface JobsOptions {
  /** codemux's data folder (`core.dataDir`, ~/.codemux from the CLI); the journal goes to `<dataDir>/jobs`. */
  dataDir: string;
  /** Open the journal at `recover()` (or the first job) rather than at once: for a process that may end before it serves. */
  openLater?: boolean;
  logger?: Logger;
  /** Jobs running at once (default 4); more are queued with their position shown. */
  maxConcurrent?: number;
  /** Jobs waiting at most (default 50); past it a start is refused. */
  maxQueued?: number;
  /** Jobs one principal may have waiting (default a quarter of maxQueued, at least 2). */
  maxQueuedPerPrincipal?: number;
  /** Limits for named principals over the default share: `{ ci: { jobs: 20 } }`. */
  principalLimits?: Record<string, JobLimits>;
  /** Jobs a session's principal may have at once, running or waiting: the core's policies (`core.access.grant(session)?.concurrentJobs`). */
  jobsAtOnce?: (session: SessionInfo) => number | undefined;
  /** Masks secrets in the journal (hooks' `Redactor`); without one the journal keeps only a digest of each request. */
  redactor?: JournalRedactor;
  /** How long a finished job stays readable (default 7 days). */
  retentionMs?: number;
  /** How long a principal's finished jobs stay (the config's `retention`); `retentionMs` otherwise. */
  retentionFor?: (principal: string) => number | undefined;
  /** Leave out the `agent` meta-tool. */
  agent?: boolean;
  /** The agent's default turn limit (default 12). */
  agentMaxTurns?: number;
  /** Jobs seen by every instance of a deployment (`@codemux/redis`' `RedisJobShare`): output and cancel from any of them. */
  share?: JobShare;
  /** Where `jobsAtOnce` is counted when instances share a store (`@codemux/redis`' `RedisSlots`): on all of them together. */
  slots?: SharedSlots;
  /** How long a job waits in the shared queue for an instance with room before it ends failed (default 10 min). */
  maxWaitMs?: number;
  /** How long a running snippet job may wait on tools (default 30 min); its own computing keeps `execute_code`'s timeout. */
  maxRunMs?: number;
  now?: () => number;
}

/** Everything codemux needs for jobs: the runner, the meta-tools, the transcript middleware, MCP tasks. */
export interface Jobs {
  manager: JobManager;
  /** `CodemuxOptions.jobs` */
  runner: JobRunner;
  /** `CodemuxOptions.metaTools`: jobs, and agent (listed only to clients that declared sampling). */
  metaTools: MetaTool<never>[];
  /** `CodemuxOptions.middleware`: writes each job's downstream calls to its transcript. */
  middleware: ToolCallMiddleware;
  /** One session server's MCP tasks (protocol 2025-11-25), served from the jobs. */
  taskStore(options: TaskStoreOptions): TaskStore;
  /** Resolves once the journal is read: how many jobs were loaded and which were interrupted. */
  recover(): Promise<RecoveryReport>;
  /** Deletes every job of a principal, with its transcript and result (`codemux forget`); resolves with how many went. */
  forget(principal: string): Promise<number>;
  /** Stops: jobs still running are journaled `interrupted`. */
  close(): Promise<void>;
}

/**
 * Jobs for a codemux core. Opening the journal starts at once (at `recover()` with `openLater`); `recover()` waits for it.
 *
 * @example
 * const jobs = createJobs({ dataDir: "/home/me/.codemux" });
 * const core = new Codemux({ config, jobs: jobs.runner, metaTools: jobs.metaTools, middleware: [jobs.middleware], dataDir });
 * await jobs.recover();
 */
export function createJobs(options: JobsOptions): Jobs {
  const manager = new JobManager({
    dir: join(options.dataDir, "jobs"),
    ...(options.openLater ? { openLater: true } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.maxConcurrent !== undefined ? { maxConcurrent: options.maxConcurrent } : {}),
    ...(options.maxQueued !== undefined ? { maxQueued: options.maxQueued } : {}),
    ...(options.maxQueuedPerPrincipal !== undefined ? { maxQueuedPerPrincipal: options.maxQueuedPerPrincipal } : {}),
    ...(options.principalLimits ? { principalLimits: options.principalLimits } : {}),
    ...(options.jobsAtOnce ? { jobsAtOnce: options.jobsAtOnce } : {}),
    ...(options.redactor ? { redactor: options.redactor } : {}),
    ...(options.retentionMs !== undefined ? { retentionMs: options.retentionMs } : {}),
    ...(options.retentionFor ? { retentionFor: options.retentionFor } : {}),
    ...(options.share ? { share: options.share } : {}),
    ...(options.slots ? { slots: options.slots } : {}),
    ...(options.maxWaitMs !== undefined ? { maxWaitMs: options.maxWaitMs } : {}),
    ...(options.maxRunMs !== undefined ? { maxRunMs: options.maxRunMs } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const middleware: ToolCallMiddleware = async (ctx, next) => {
    const id = manager.jobForCall(ctx);
    if (!id) return next(ctx);
    return manager.recordCall(id, { tool: ctx.entry.qualifiedName, args: ctx.arguments, origin: ctx.origin }, () => next(ctx));
  };
  const questions: TaskQuestionBoard = new Map();
  const metaTools = [
    jobsMetaTool(manager),
    ...(options.agent === false ? [] : [agentMetaTool(manager, options.agentMaxTurns !== undefined ? { maxTurns: options.agentMaxTurns } : {})]),
  ];
  return {
    manager,
    runner: manager,
    metaTools,
    middleware,
    taskStore: (store) => jobTaskStore(manager, store, questions),
    recover: () => manager.ready(),
    forget: (principal) => manager.forget(principal),
    close: () => manager.close(),
  };
}
