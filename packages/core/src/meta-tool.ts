import type { CallOrigin, SessionInfo } from "./context";
import type { InputResume, Progress, TaskRun, ToolResult } from "./mcp";
import type { ToolDefinition } from "./tool";

/** The JSON Schema subset meta-tools declare their inputs with. */
export interface InputProperty {
  type?: "string" | "integer" | "number" | "boolean" | "object" | "array";
  description?: string;
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  maxItems?: number;
  items?: InputProperty;
  default?: unknown;
  /** Accepted on input but not shown in the tool list (an alias kept for older callers, a rare option). */
  unlisted?: boolean;
}

export interface InputSchema {
  type: "object";
  properties: Record<string, InputProperty>;
  required?: readonly string[];
}

/** Who asks and how: what a front end knows of one request, passed to the surface that answers it. */
export interface RequestContext {
  session: SessionInfo;
  /** The front end the request came through: `call_tool` for MCP clients, `cli`, `rest`, `job`... */
  origin: CallOrigin;
  signal?: AbortSignal;
  progress?: (progress: Progress) => void;
  /** The client request's id, passed on to the calls it makes (for logs and hooks). */
  requestId?: string;
  /** The retry of a call that answered `input_required`: its answers go to that one downstream call. */
  resume?: InputResume;
  /** Set when a background job runs the request: how long it may wait on tools (a snippet's own computing stays bounded by its timeout). */
  jobRunMs?: number;
  /**
   * Set on a 2026-07-28 request that declared the Tasks extension, where codemux can make tasks: a direct call
   * whose server answers with a task hands it over here, and the request is answered with codemux's task.
   */
  takeTask?: (run: TaskRun) => Promise<void>;
}

/**
 * What one mode shows a client: its tool list and how a call to one of its tools is answered. A mode
 * is a surface chosen by name (`--mode code`); jobs' agent and tasks call through one too.
 */
export interface Surface {
  readonly name: string;
  /** Server instructions sent at initialize, for the session about to start (its policy may hide servers). */
  instructions(session?: SessionInfo): string | undefined;
  /** True when the tool list follows the catalog, so clients are told when it changes. */
  readonly listChanges: boolean;
  /** The tools one session's client sees (some are listed only to clients with a capability); a session-less caller sees the plain list. */
  listTools(session?: SessionInfo): Promise<ToolDefinition[]>;
  callTool(name: string, args: Record<string, unknown>, request: RequestContext): Promise<ToolResult>;
}

/** What every meta-tool may use besides its own: the surfaces, to call other meta-tools (an agent loop, a task). */
export interface MetaToolServices {
  surface(mode?: string): Surface;
}

/** What a meta-tool's handler gets besides its input: the services of the host that runs it, and the request. */
export interface MetaToolContext<Services = MetaToolServices> extends RequestContext {
  services: Services;
}

/** A meta-tool, defined once: the definition the model sees (its input schema is also what reads the input), and its handler. */
export interface MetaTool<Input = Record<string, unknown>, Services = MetaToolServices> {
  readonly definition: ToolDefinition & { inputSchema: InputSchema };
  run(input: Input, ctx: MetaToolContext<Services>): Promise<ToolResult>;
  /** Whether a session's tool list shows this tool (e.g. only to clients with a capability); always when absent. A call is not checked: the tool refuses it with its own sentence. */
  readonly listed?: (session: SessionInfo | undefined) => boolean;
}

/**
 * Defines a meta-tool. `Input` is the shape `inputSchema` describes after defaults are applied.
 *
 * @example
 * const echo = defineMetaTool<{ text: string }>({
 *   name: "echo",
 *   description: "Say it back.",
 *   inputSchema: { type: "object", properties: { text: { type: "string", maxLength: 100 } }, required: ["text"] },
 *   run: async ({ text }) => ({ content: [{ type: "text", text }] }),
 * });
 */
export function defineMetaTool<Input, Services = MetaToolServices>(
  spec: ToolDefinition & {
    inputSchema: InputSchema;
    run(input: Input, ctx: MetaToolContext<Services>): Promise<ToolResult>;
    listed?: (session: SessionInfo | undefined) => boolean;
  },
): MetaTool<Input, Services> {
  const { run, listed, ...definition } = spec;
  return { definition, run, ...(listed ? { listed } : {}) };
}

/** Work to run in the background: a snippet or one tool call, as execute_code or call_tool would answer it. */
export interface BackgroundWork {
  kind: "execute_code" | "call_tool" | (string & {});
  /** One line for lists: the tool's name, or the snippet's first line. */
  description: string;
  /** The request as given, for the journal (a snippet's code, a call's name and arguments). */
  request: Record<string, unknown>;
  session: SessionInfo;
  /** Does the work; the signal aborts when the job is cancelled, progress is kept for `jobs` output. */
  run(context: { signal: AbortSignal; progress: (progress: Progress) => void; job: string; jobRunMs?: number }): Promise<ToolResult>;
}

/**
 * Runs work in the background and answers at once with a job id (`@codemux/jobs` is the real one).
 * A host without one refuses `background: true` with a sentence saying how to turn jobs on.
 */
export interface JobRunner {
  start(work: BackgroundWork): Promise<{ id: string; position?: number }>;
}
