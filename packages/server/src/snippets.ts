import {
  BRIDGE_SPECIFIER,
  SERVERS_PREFIX,
  toolValueAnswer,
  VALUE_CALL_SUFFIX,
  type Logger,
  type Progress,
  type RequestContext,
  type SessionInfo,
  type ToolResult,
} from "@codemux/core";
import { Sandbox, snippetImports, type CodeExecutor, type ExecuteResult, type SandboxOptions } from "@codemux/sandbox";
import { tracing } from "@codemux/pool";
import { context as traceContext } from "@opentelemetry/api";
import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ModuleNamespace } from "./modules/namespace";
import { callRequest } from "./pipeline/call-request";
import type { ToolCallPipeline } from "./pipeline/pipeline";
import type { Readiness } from "./readiness";
import type { AnswerHints } from "./render/hints";
import { withFindTools } from "./render/text";

export interface ExecuteOptions {
  timeoutMs?: number;
  /** A background job's allowance: the run may wait on tools this long, its own computing bounded by `timeoutMs`. */
  waitTimeoutMs?: number;
  signal?: AbortSignal;
  session: SessionInfo;
  requestId?: string;
  /** The background job running this snippet; its calls carry it. */
  job?: string;
  onprogress?: (progress: { tool: string; progress: Progress }) => void;
  /** Told of each tool call the snippet starts, before it goes out. */
  oncall?: (call: { tool: string; args: unknown }) => void;
  /** The front end's hints: a call's "no tool named" error then says how to find tools there. */
  hints?: AnswerHints;
}

export interface SnippetHostOptions {
  namespace: ModuleNamespace;
  pipeline: ToolCallPipeline;
  readiness: Readiness;
  logger: Logger;
  clock: () => number;
  /** Runs snippets; a `Sandbox` (with `sandbox` options) when absent, started on first use. */
  executor?: CodeExecutor;
  sandbox?: SandboxOptions;
  /** Keep each snippet, its bundle and source map under this folder (one subfolder a run), for debugging. */
  keepBundlesDir?: string;
}

/**
 * Runs snippets for the meta-tools: hands the sandbox one object that answers both its questions, the
 * source of a module (from the namespace) and a host call (a tool through the call pipeline, with origin
 * `execute_code`, or one of the namespace's own modules).
 */
export class SnippetHost {
  readonly #options: SnippetHostOptions;
  #executor: CodeExecutor | undefined;

  constructor(options: SnippetHostOptions) {
    this.#options = options;
  }

  /** The sandbox, made on first use; every tool wrapper imports the bridge, so each run's engine builds it before the run. */
  get executor(): CodeExecutor {
    const { executor, sandbox, namespace } = this.#options;
    this.#executor ??= executor ?? new Sandbox({ preloadModules: { [BRIDGE_SPECIFIER]: namespace.source(BRIDGE_SPECIFIER) as string }, ...sandbox });
    return this.#executor;
  }

  async execute(code: string, options: ExecuteOptions): Promise<ExecuteResult> {
    const { namespace, pipeline, readiness, keepBundlesDir } = this.#options;
    await waitForImports(readiness, code);
    const { session, requestId, job, onprogress, oncall, hints } = options;
    // What every call of this run shares; each call adds its own signal (and progress) to the request built from it.
    const run: RequestContext & { job?: string } = { session, origin: "execute_code" };
    if (requestId !== undefined) run.requestId = requestId;
    if (job !== undefined) run.job = job;
    // The run's calls end downstream on one signal, aborted when the run ends, as each call's own signal then is (for calls still pending).
    let runCalls: AbortController | undefined;
    // The run's calls answer the sandbox's messages, outside the request's async context: each is made in the one taken here (with tracing on).
    const traced = tracing() ? traceContext.active() : undefined;
    // Kept files are written before the answer goes back, so whoever reads the folder then finds them.
    let keeping: Promise<void> | undefined;
    try {
      return await this.executor.execute({
        code,
        modules: (specifier) => namespace.source(specifier, session),
        suggestModules: (specifier) => namespace.suggest(specifier, session),
        // A snippet's every tool call comes through here.
        onCall: (called, args, context) => {
          if (namespace.ownsCall(called)) return namespace.call({ name: called, args, session, signal: context.signal });
          // The bridge's callTool asks for the value: the host turns the result into it, the guest only forwards.
          const value = called.endsWith(VALUE_CALL_SUFFIX);
          const name = value ? called.slice(0, -VALUE_CALL_SUFFIX.length) : called;
          oncall?.({ tool: name, args });
          runCalls ??= new AbortController();
          const request = callRequest({ name, args }, run);
          request.signal = context.signal;
          request.downstreamSignal = runCalls.signal;
          if (onprogress) request.progress = (progress: Progress) => onprogress({ tool: name, progress });
          const result = traced ? traceContext.with(traced, () => pipeline.call(request)) : pipeline.call(request);
          const answer = value ? result.then((answer: ToolResult) => toolValueAnswer(name, answer)) : result;
          return hints ? answer.catch((error: unknown) => Promise.reject(withFindTools(error, hints))) : answer;
        },
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.waitTimeoutMs !== undefined ? { waitTimeoutMs: options.waitTimeoutMs } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(keepBundlesDir
          ? {
              onBundle: (bundle) => {
                keeping = this.#keepBundle(keepBundlesDir, bundle);
              },
            }
          : {}),
      });
    } finally {
      runCalls?.abort(new Error("The sandbox run ended."));
      await keeping;
    }
  }

  /** Starts a worker ahead of the first snippet (its first run is the slowest). */
  warm(): void {
    void this.executor.execute({ code: "export default 0" }).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.#executor?.close();
  }

  /** Writes one run's snippet, bundle and source map to a folder of its own (owner-only), and logs where. */
  async #keepBundle(dir: string, bundle: { entry: string; bundle: string; map: string }): Promise<void> {
    const { logger, clock } = this.#options;
    const runDir = join(dir, `${new Date(clock()).toISOString().replace(/[:.]/g, "-")}-${randomUUID().slice(0, 8)}`);
    try {
      await mkdir(runDir, { recursive: true, mode: 0o700 });
      await Promise.all([
        writeFile(join(runDir, "entry.ts"), bundle.entry, { mode: 0o600 }),
        writeFile(join(runDir, "bundle.mjs"), bundle.bundle, { mode: 0o600 }),
        writeFile(join(runDir, "bundle.mjs.map"), bundle.map, { mode: 0o600 }),
      ]);
      logger.info(`kept the snippet and its bundle in ${runDir}`);
    } catch (error) {
      logger.warn(`could not keep the bundle in ${runDir}: ${(error as Error).message}`);
    }
  }
}

/** Waits for the catalog, and for the servers `code` imports that are still connecting (a snippet, a skill to type-check). */
export async function waitForImports(readiness: Readiness, code: string): Promise<void> {
  await readiness.loaded();
  await Promise.all(importedServers(code).map((server) => readiness.waitForServer(server)));
}

/** Servers a snippet imports (`mcp/servers/<name>`), so it waits only for those. */
function importedServers(code: string): string[] {
  const servers = new Set<string>();
  for (const specifier of snippetImports(code)) {
    if (!specifier.startsWith(SERVERS_PREFIX)) continue;
    const server = specifier.slice(SERVERS_PREFIX.length).replace(/\.ts$/, "").split("/")[0] as string;
    if (SERVER_PATH.test(server)) servers.add(server);
  }
  return [...servers].slice(0, 100);
}

const SERVER_PATH = /^[A-Za-z0-9_-]{1,100}$/;
