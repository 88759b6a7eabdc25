import { callLine, defineMetaTool, redactSecrets } from "@codemux/core";
import { DEFAULT_EXECUTE_TIMEOUT_MS, MAX_EXECUTE_TIMEOUT_MS } from "../defaults";
import { limitResult } from "../render/limit-result";
import { executionResult } from "../render/text";
import type { CodemuxServices } from "../services";
import { inBackground } from "./background";

export const executeCode = defineMetaTool<{ code: string; timeoutMs: number; background?: boolean }, CodemuxServices>({
  name: "execute_code",
  description:
    'Run TypeScript chaining tools in a sandbox: import { readTextFile } from "mcp/servers/fs/readTextFile" (async; returns the value, throws errors). Answers export default as JSON, and console output.',
  inputSchema: {
    type: "object",
    properties: {
      code: { type: "string" },
      timeoutMs: { type: "integer", minimum: 100, maximum: MAX_EXECUTE_TIMEOUT_MS, default: DEFAULT_EXECUTE_TIMEOUT_MS },
      background: { type: "boolean" },
    },
    required: ["code"],
  },
  run: async ({ code, timeoutMs, background }, ctx) => {
    const execute = async (signal: AbortSignal | undefined, report: typeof ctx.progress, { job, jobRunMs }: { job?: string; jobRunMs?: number } = {}) => {
      let step = 0;
      const run = await ctx.services.snippets.execute(code, {
        timeoutMs,
        // A job may wait on tools as long as the jobs settings allow; its own computing keeps the foreground bound.
        ...(jobRunMs !== undefined ? { waitTimeoutMs: jobRunMs } : {}),
        session: ctx.session,
        hints: ctx.services.hints,
        ...(signal ? { signal } : {}),
        ...(ctx.requestId !== undefined ? { requestId: ctx.requestId } : {}),
        ...(job !== undefined ? { job } : {}),
        // Inner calls' progress keeps the outer request alive; one counter keeps the values increasing.
        ...(report
          ? {
              onprogress: ({ tool, progress }) =>
                report({ progress: ++step, message: `${tool}: ${progress.progress}${progress.total ? `/${progress.total}` : ""}` }),
            }
          : {}),
        // A line per call started, in the foreground only: a job keeps its calls' lines itself (as its lastProgress).
        ...(report && job === undefined ? { oncall: ({ tool, args }) => report({ progress: ++step, message: callLine(tool, args, redactSecrets) }) } : {}),
      });
      return limitResult(ctx.services, { tool: "execute_code", result: executionResult(run), owner: ctx.session });
    };
    if (background) {
      const description = code.trimStart().split("\n", 1)[0]?.slice(0, 120) ?? "snippet";
      return inBackground(ctx, {
        kind: "execute_code",
        description,
        request: { code, timeoutMs },
        run: ({ signal, progress, job, jobRunMs }) => execute(signal, progress, { job, ...(jobRunMs !== undefined ? { jobRunMs } : {}) }),
      });
    }
    // A job taken from the shared queue runs here as a foreground call that carries its job's allowance.
    return execute(ctx.signal, ctx.progress, ctx.jobRunMs !== undefined ? { jobRunMs: ctx.jobRunMs } : {});
  },
});
