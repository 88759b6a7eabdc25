import { DEFAULT_EXECUTE_TIMEOUT_MS, MAX_EXECUTE_TIMEOUT_MS } from "../defaults";
import { executionResult } from "../render";
import { limitResult } from "./limit-result";
import { defineMetaTool } from "./registry";

export const executeCode = defineMetaTool<{ code: string; timeoutMs: number }>({
  name: "execute_code",
  description:
    "Run a TypeScript module in a sandbox to chain tools without passing data through you. Import tools as async functions (import { readTextFile } from \"mcp/servers/fs/readTextFile\"); each returns the tool's value (structured result, parsed JSON or text) and throws on tool errors. Returns export default (as JSON), console output and errors. No network, files or process: tools are the only way out; Promise.all runs calls concurrently.",
  inputSchema: {
    type: "object",
    properties: {
      code: { type: "string", description: "TypeScript ES module; its export default is the result." },
      timeoutMs: { type: "integer", minimum: 100, maximum: MAX_EXECUTE_TIMEOUT_MS, default: DEFAULT_EXECUTE_TIMEOUT_MS, description: "Time limit of the whole run." },
    },
    required: ["code"],
  },
  run: async ({ code, timeoutMs }, ctx) => {
    let step = 0;
    const run = await ctx.core.executeCode(code, {
      timeoutMs,
      session: ctx.session,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      // Inner calls' progress keeps the outer request alive; one counter keeps the values increasing.
      ...(ctx.progress
        ? { onprogress: ({ tool, progress }) => ctx.progress?.({ progress: ++step, message: `${tool}: ${progress.progress}${progress.total ? `/${progress.total}` : ""}` }) }
        : {}),
    });
    return limitResult(ctx.core, { tool: "execute_code", result: executionResult(run), owner: ctx.session.id });
  },
});
