import type { JobRunner, MetaTool, TaskStore, ToolCallMiddleware } from "@codemux/core";
import { join } from "node:path";
import { agentMetaTool } from "./agent";
import { JobManager, type JobManagerOptions } from "./job-manager";
import type { RecoveryReport } from "./recovery";
import { jobsMetaTool } from "./meta-tools";
import type { TaskStoreOptions } from "./task-options";
import type { TaskQuestionBoard } from "./task-extension";
import { jobTaskStore } from "./task-store";

/** The job manager's options, with codemux's data folder in place of the journal's folder. */
export interface JobsOptions extends Omit<JobManagerOptions, "dir"> {
  /** codemux's data folder (`core.dataDir`, ~/.codemux from the CLI); the journal goes to `<dataDir>/jobs`. */
  dataDir: string;
  /** Leave out the `agent` meta-tool. */
  agent?: boolean;
  /** The agent's default turn limit (default 12). */
  agentMaxTurns?: number;
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
  const { dataDir, agent, agentMaxTurns, ...managerOptions } = options;
  const manager = new JobManager({ ...managerOptions, dir: join(dataDir, "jobs") });
  // Not async: a call outside a job is handed on as it is, without the two turns an async function's returned promise costs.
  const middleware: ToolCallMiddleware = (ctx, next) => {
    const id = manager.jobForCall(ctx);
    if (!id) return next(ctx);
    return manager.recordCall(id, { tool: ctx.entry.qualifiedName, args: ctx.arguments, origin: ctx.origin }, () => next(ctx));
  };
  const questions: TaskQuestionBoard = new Map();
  const metaTools = [
    jobsMetaTool(manager),
    ...(agent === false ? [] : [agentMetaTool(manager, agentMaxTurns !== undefined ? { maxTurns: agentMaxTurns } : {})]),
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
