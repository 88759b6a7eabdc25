import {
  callLine,
  estimateTokens,
  redactSecrets,
  type SamplingMessage,
  type SessionInfo,
  type ToolDefinition,
  type ToolResult,
  defineMetaTool,
  type MetaTool,
  type MetaToolContext,
} from "@codemux/core";
import { randomUUID } from "node:crypto";
import { JobsError } from "./errors";
import { seconds } from "./format";
import type { JobManager } from "./job-manager";
import { FOREVER_MS } from "./task-options";
import { TERMINAL } from "./types";

/** codemux's own meta-tools the agent may use (never the job tools, so an agent cannot start agents). */
export const AGENT_TOOLS = ["search_tools", "read_module", "execute_code", "call_tool", "read_result"];
export const DEFAULT_AGENT_TURNS = 12;
const MAX_AGENT_TURNS = 50;
const SAMPLE_MAX_TOKENS = 4096;
/** A tool answer sent back to the model is cut to this many characters (results are already limited, this is a second bound). */
const MAX_TOOL_TEXT = 50_000;
/** A model reply longer than this is not searched for tool blocks beyond it (the text protocol's linear bound). */
const MAX_REPLY_SCAN = 200_000;
const MAX_TOOL_BLOCKS = 10;

const SYSTEM = [
  "You are a sub-agent of codemux, an MCP proxy in front of many tool servers.",
  "Find tools with search_tools, read their typed modules with read_module, and chain them with execute_code (a TypeScript module whose export default is the result); call_tool calls one tool.",
  "Work until the task is done, then answer with a short final report (what you found or did) and no tool call.",
].join(" ");

/** The text protocol, for clients whose sampling has no tool support: tool calls as fenced JSON blocks. */
export function textProtocol(tools: ToolDefinition[]): string {
  return [
    "To use a tool, reply with one or more blocks exactly like this and nothing else:",
    "```tool",
    '{"name": "search_tools", "arguments": {"query": "read a file"}}',
    "```",
    "Each block's answer comes back in the next message. When you are done, reply with your final answer and no tool block.",
    "Tools:",
    ...tools.map((t) => `- ${t.name}: ${t.description ?? ""} Arguments (JSON Schema): ${JSON.stringify(t.inputSchema)}`),
  ].join("\n");
}

/** ToolDefinition blocks of a text-protocol reply, in order; malformed blocks are reported back as errors. */
export function parseToolBlocks(text: string): Array<{ id: string; name: string; input: Record<string, unknown> } | { id: string; error: string }> {
  const found: Array<{ id: string; name: string; input: Record<string, unknown> } | { id: string; error: string }> = [];
  const pattern = /```tool[ \t]*\r?\n([\s\S]*?)```/g;
  const scanned = text.slice(0, MAX_REPLY_SCAN);
  for (let match = pattern.exec(scanned); match && found.length < MAX_TOOL_BLOCKS; match = pattern.exec(scanned)) {
    const id = `t${found.length + 1}`;
    try {
      const value = JSON.parse(match[1] ?? "") as { name?: unknown; arguments?: unknown };
      if (typeof value.name !== "string") found.push({ id, error: 'a tool block needs "name" (a string)' });
      else
        found.push({
          id,
          name: value.name,
          input: typeof value.arguments === "object" && value.arguments !== null ? (value.arguments as Record<string, unknown>) : {},
        });
    } catch (error) {
      found.push({ id, error: `a tool block is not valid JSON (${(error as Error).message.slice(0, 100)})` });
    }
  }
  return found;
}

type Block = { type: string; [key: string]: unknown };

function blocksOf(content: unknown): Block[] {
  const list = Array.isArray(content) ? content : [content];
  return list.filter((b): b is Block => typeof b === "object" && b !== null && typeof (b as { type?: unknown }).type === "string");
}

function textOf(blocks: Block[]): string {
  return blocks.map((b) => (b.type === "text" && typeof b.text === "string" ? b.text : "")).join("\n");
}

function toolText(result: ToolResult): string {
  const text = result.content.map((c) => (c.type === "text" ? c.text : `[${c.type} content]`)).join("\n");
  return text.length > MAX_TOOL_TEXT ? `${text.slice(0, MAX_TOOL_TEXT)}\n[cut at ${MAX_TOOL_TEXT} characters]` : text;
}

/** The agent's view of a meta-tool: no `background` (its calls already run inside a job). */
function agentTool(tool: ToolDefinition): ToolDefinition {
  const properties = { ...(tool.inputSchema.properties ?? {}) };
  delete properties.background;
  return { name: tool.name, ...(tool.description ? { description: tool.description } : {}), inputSchema: { ...tool.inputSchema, properties } };
}

export interface AgentUsage {
  inputTokens: number;
  outputTokens: number;
}

/** The `agent` meta-tool: a tool-using loop over codemux's meta-tools on the client's own model (MCP sampling). */
export function agentMetaTool(manager: JobManager, options: { maxTurns?: number } = {}): MetaTool<never> {
  const defaultTurns = Math.min(MAX_AGENT_TURNS, options.maxTurns ?? DEFAULT_AGENT_TURNS);
  return defineMetaTool<{ prompt: string; background: boolean; resume?: string; max_turns: number }>({
    name: "agent",
    description:
      "Hand a task to a sub-agent on your own model (MCP sampling) with search_tools, read_module, execute_code and call_tool; returns its final report. background: true answers with a job id for jobs; resume: a finished agent's job id continues it.",
    inputSchema: {
      type: "object",
      properties: {
        prompt: { type: "string", maxLength: 50_000, description: "the whole task: the sub-agent sees nothing else" },
        background: { type: "boolean", default: false },
        resume: { type: "string", maxLength: 40 },
        max_turns: { type: "integer", minimum: 1, maximum: MAX_AGENT_TURNS, default: defaultTurns },
      },
      required: ["prompt"],
    },
    // Only a client that declared sampling can run it: the others are not shown it (and get NO_SAMPLING if they call it).
    listed: (session) => Boolean(session?.peer?.capabilities()?.sampling),
    run: async ({ prompt, background, resume, max_turns }, ctx) => {
      await manager.ready();
      const peer = ctx.session.peer;
      const sampling = peer?.capabilities()?.sampling;
      if (!peer || !sampling) {
        throw new JobsError(
          "NO_SAMPLING",
          "This client offers no sampling (MCP sampling/createMessage), so the agent has no model to run on. Use search_tools, execute_code and call_tool yourself, or connect with a client that supports sampling.",
        );
      }
      const history = resume ? await resumeFrom(manager, resume, ctx.session.principal) : [];
      // The agent acts as its caller: the same principal and claims (its policy matches them), in a session of its own.
      const { principal, groups, scopes } = ctx.session;
      const callSession: SessionInfo = { id: `agent-${randomUUID()}`, principal, ...(groups ? { groups } : {}), ...(scopes ? { scopes } : {}), peer };
      const native = Boolean((sampling as { tools?: unknown }).tools);
      let forward: MetaToolContext["progress"] = undefined;
      const started = await manager.start(
        {
          kind: "agent",
          description: `${resume ? `(resumes ${resume}) ` : ""}${prompt}`,
          request: { prompt, ...(resume ? { resume } : {}), max_turns },
          session: ctx.session,
          run: ({ signal, progress }) =>
            runAgent({
              manager,
              ctx,
              callSession,
              signal,
              progress: (p) => {
                progress(p);
                forward?.(p);
              },
              prompt,
              history,
              native,
              maxTurns: max_turns,
            }),
        },
        { callSession: callSession.id },
      );
      if (background) return startedAnswer(started, prompt);
      forward = ctx.progress;
      return agentResult(manager, started.id, ctx);
    },
  }) as MetaTool<never>;
}

/** A background agent's answer: its job id, and where it waits when it is queued. */
function startedAnswer(started: { id: string; position?: number }, prompt: string): ToolResult {
  const queued = started.position ? ` It is queued at position ${started.position}.` : "";
  return {
    content: [
      {
        type: "text",
        text: `Started agent job ${started.id} in the background.${queued} Collect it with jobs {"action":"output","ids":["${started.id}"]}.`,
      },
    ],
    structuredContent: { status: "async_launched", agentId: started.id, prompt: prompt.slice(0, 200) },
  };
}

/** A foreground agent's report, once its job ends; a caller that gives up (cancels its request) stops the agent with it. */
async function agentResult(manager: JobManager, id: string, ctx: MetaToolContext): Promise<ToolResult> {
  await manager.wait([id], { timeoutMs: FOREVER_MS, ...(ctx.signal ? { signal: ctx.signal } : {}) });
  const job = manager.get(id, ctx.session.principal);
  if (job && !TERMINAL.has(job.status)) {
    await manager.cancel(id, ctx.session.principal, "tool");
    throw new JobsError("AGENT_FAILED", `The request was cancelled; agent job ${id} was cancelled with it.`);
  }
  const result = job ? await manager.result(job) : undefined;
  if (result) return result;
  throw new JobsError("AGENT_FAILED", `Agent job ${id} ${job?.status ?? "vanished"}: ${job?.error ?? "no result"}.`, { data: { id } });
}

/** The conversation of a finished agent job, from its transcript. */
async function resumeFrom(manager: JobManager, id: string, principal: string): Promise<SamplingMessage[]> {
  const job = manager.get(id, principal);
  if (!job || job.kind !== "agent") throw new JobsError("BAD_RESUME", `No agent job ${id} for this client to resume; jobs {action:"list"} shows yours.`);
  if (!TERMINAL.has(job.status))
    throw new JobsError("BAD_RESUME", `Agent job ${id} is still ${job.status}; wait for it with jobs {action:"output"}, or cancel it, before resuming.`);
  const { entries, error } = await manager.transcript(job);
  if (error !== undefined) throw new JobsError("BAD_RESUME", `Agent job ${id}'s transcript cannot be read: ${error}`);
  const messages = entries.flatMap((e) => (e.type === "message" ? [e.message] : []));
  if (messages.length === 0) throw new JobsError("BAD_RESUME", `Agent job ${id} has no transcript to resume from (it was removed, or the job never sampled).`);
  // A conversation that stopped after a tool call without its answer cannot go on as is: drop the dangling turn.
  while (
    messages.length &&
    messages[messages.length - 1]?.role === "assistant" &&
    blocksOf(messages[messages.length - 1]?.content).some((b) => b.type === "tool_use")
  )
    messages.pop();
  return messages;
}

interface AgentRun {
  manager: JobManager;
  ctx: MetaToolContext;
  callSession: SessionInfo;
  signal: AbortSignal;
  progress: (p: { progress: number; message?: string }) => void;
  prompt: string;
  history: SamplingMessage[];
  native: boolean;
  maxTurns: number;
}

type ToolUse = ReturnType<typeof parseToolBlocks>[number];
type Answer = { id: string; name: string; result: ToolResult };
type CodeSurface = ReturnType<MetaToolContext["services"]["surface"]>;
/** What one agent run counts as it goes: progress steps, tool uses, and the estimated tokens. */
type Tally = { step: number; toolUses: number; usage: AgentUsage };

async function runAgent(run: AgentRun): Promise<ToolResult> {
  const { manager, ctx, callSession, signal } = run;
  const jobId = manager.jobForCall({ signal, session: callSession, origin: "job", progress: undefined }) ?? "";
  const startedAt = performance.now();
  const surface = ctx.services.surface("code");
  const tools = (await surface.listTools()).filter((t) => AGENT_TOOLS.includes(t.name)).map(agentTool);
  const systemPrompt = run.native ? SYSTEM : `${SYSTEM}\n\n${textProtocol(tools)}`;
  const messages: SamplingMessage[] = [...run.history];
  const push = (message: SamplingMessage) => {
    messages.push(message);
    manager.note(jobId, { ts: manager.now(), type: "message", message });
  };
  push({ role: "user", content: { type: "text", text: run.prompt } });
  const tally: Tally = { step: 0, toolUses: 0, usage: { inputTokens: 0, outputTokens: 0 } };
  let final: string | undefined;
  let turns = 0;
  for (; turns < run.maxTurns && final === undefined; turns++) {
    const params = {
      messages,
      systemPrompt,
      maxTokens: SAMPLE_MAX_TOKENS,
      includeContext: "none",
      ...(run.native
        ? { tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })), toolChoice: { mode: "auto" } }
        : {}),
    } satisfies Record<string, unknown>;
    // Sampling answers carry no usage: both sides are estimated with codemux's one estimator.
    tally.usage.inputTokens += estimateTokens(systemPrompt) + estimateTokens(JSON.stringify(messages));
    run.progress({ progress: ++tally.step, message: `turn ${turns + 1}: asking the model` });
    const answer = await callSession.peer!.createMessage(params, { signal });
    const blocks = blocksOf(answer.content);
    tally.usage.outputTokens += estimateTokens(JSON.stringify(blocks));
    push({ role: "assistant", content: blocks } as unknown as SamplingMessage);
    const uses: ToolUse[] = run.native
      ? blocks.filter((b) => b.type === "tool_use").map((b) => ({ id: String(b.id), name: String(b.name), input: (b.input ?? {}) as Record<string, unknown> }))
      : parseToolBlocks(textOf(blocks));
    if (uses.length === 0) {
      final = textOf(blocks);
      break;
    }
    push(answersMessage(await runUses(run, uses, { jobId, surface, tally }), run.native));
  }
  return agentReport(run, { jobId, final, turns, tally, durationMs: Math.round(performance.now() - startedAt) });
}

/** Runs one turn's tool uses in order: an unreadable one is answered with why, a tool the agent may not use is refused. */
async function runUses(run: AgentRun, uses: ToolUse[], turn: { jobId: string; surface: CodeSurface; tally: Tally }): Promise<Answer[]> {
  const { manager, callSession, signal } = run;
  const { jobId, surface, tally } = turn;
  const answers: Answer[] = [];
  for (const use of uses) {
    if ("error" in use) {
      answers.push({ id: use.id, name: "(unreadable)", result: { content: [{ type: "text", text: `Not run: ${use.error}.` }], isError: true } });
      continue;
    }
    tally.toolUses++;
    run.progress({ progress: ++tally.step, message: callLine(use.name, use.input, redactSecrets) });
    const result = AGENT_TOOLS.includes(use.name)
      ? await manager.recordCall(jobId, { tool: use.name, args: use.input, origin: "agent" }, () =>
          surface.callTool(use.name, { ...use.input, background: false }, { session: callSession, origin: "job", signal }),
        )
      : { content: [{ type: "text" as const, text: `No tool "${use.name}" here; use one of ${AGENT_TOOLS.join(", ")}.` }], isError: true };
    answers.push({ id: use.id, name: use.name, result });
  }
  return answers;
}

/** The user message that gives the model its tool uses' results: tool_result blocks, or text in the text protocol. */
function answersMessage(answers: Answer[], native: boolean): SamplingMessage {
  if (native)
    return {
      role: "user",
      content: answers.map((a) => ({
        type: "tool_result",
        toolUseId: a.id,
        content: [{ type: "text", text: toolText(a.result) }],
        ...(a.result.isError ? { isError: true } : {}),
      })),
    } as unknown as SamplingMessage;
  return {
    role: "user",
    content: {
      type: "text",
      text: answers.map((a) => `Result of ${a.name} (${a.id})${a.result.isError ? " [error]" : ""}:\n${toolText(a.result)}`).join("\n\n"),
    },
  };
}

/** The agent's answer: its final text (or why it stopped), a line of what it used, and the same as structured content. */
function agentReport(run: AgentRun, end: { jobId: string; final: string | undefined; turns: number; tally: Tally; durationMs: number }): ToolResult {
  const { jobId, final, turns, durationMs } = end;
  const { toolUses, usage } = end.tally;
  const totalTokens = usage.inputTokens + usage.outputTokens;
  const stopped = final === undefined;
  const report = stopped
    ? `The agent stopped after ${run.maxTurns} turns without a final answer; resume it with agent {"resume":"${jobId}", "prompt":"go on"} or raise max_turns.`
    : final;
  const stats = `[agent ${jobId}: ${toolUses} tool use${toolUses === 1 ? "" : "s"}, ${turns + (stopped ? 0 : 1)} turn(s), ${seconds(durationMs)}, ~${totalTokens} tokens (estimated: ${usage.inputTokens} in, ${usage.outputTokens} out)${run.native ? "" : "; text tool protocol"}]`;
  return {
    content: [
      { type: "text", text: report ?? "" },
      { type: "text", text: stats },
    ],
    structuredContent: {
      status: stopped ? "max_turns" : "completed",
      agentId: jobId,
      totalToolUseCount: toolUses,
      totalDurationMs: durationMs,
      totalTokens,
      usage: { ...usage, estimated: true },
    },
    ...(stopped ? { isError: true } : {}),
  };
}
