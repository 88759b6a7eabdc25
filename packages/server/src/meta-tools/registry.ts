import type { Progress, ToolDefinition, ToolResult, CallOrigin, SessionInfo } from "@codemux/core";
import type { Codemux } from "../core";
import { UnknownMetaToolError } from "../errors";
import { errorResult } from "../render";
import { checkFields, readInput, type InputSchema } from "./input";

/** What a meta-tool's handler gets besides its input: the core, who asks, and the request's signal and progress sink. */
export interface MetaToolContext {
  core: Codemux;
  session: SessionInfo;
  /** The surface the request came through: `call_tool` for MCP clients, `cli`, `rest`... */
  origin: CallOrigin;
  signal?: AbortSignal;
  progress?: (progress: Progress) => void;
  /** The client request's id, passed on to the calls it makes (for logs and hooks). */
  requestId?: string;
}

/** A meta-tool, defined once: the definition the model sees (its input schema is also what reads the input), and its handler. */
export interface MetaTool<Input = Record<string, unknown>> {
  readonly definition: ToolDefinition & { inputSchema: InputSchema };
  run(input: Input, ctx: MetaToolContext): Promise<ToolResult>;
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
export function defineMetaTool<Input>(
  spec: ToolDefinition & {
    inputSchema: InputSchema;
    run(input: Input, ctx: MetaToolContext): Promise<ToolResult>;
    listed?: (session: SessionInfo | undefined) => boolean;
  },
): MetaTool<Input> {
  const { run, listed, ...definition } = spec;
  return { definition, run, ...(listed ? { listed } : {}) };
}

/** Meta-tools by name: the one place a surface looks them up, reads their input and turns failures into error results. */
export class MetaToolRegistry {
  readonly #tools = new Map<string, MetaTool>();

  constructor(tools: Iterable<MetaTool<never>> = []) {
    for (const tool of tools) this.add(tool);
  }

  add<Input>(tool: MetaTool<Input>): void {
    this.#tools.set(tool.definition.name, tool as unknown as MetaTool);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  get names(): string[] {
    return [...this.#tools.keys()];
  }

  /**
   * The definitions as one session's client sees them, in the order added; tools not listed for it are
   * left out. The listing says what to send, and every token of it costs each session: bounds
   * (`maxLength`, `maxItems`, `minimum`, `maximum`) are enforced on input with a sentence naming the
   * range, defaults are applied on input, and `unlisted` properties (aliases, rare options an answer
   * points to) are accepted; all of them are left out here.
   */
  definitions(session?: SessionInfo): ToolDefinition[] {
    return [...this.#tools.values()]
      .filter((t) => !t.listed || t.listed(session))
      .map((t) => ({ ...t.definition, inputSchema: listedSchema(t.definition.inputSchema) }));
  }

  /** Reads the input by the tool's schema (refusing a field it does not name) and runs it; every failure comes back as an error result, never a throw. */
  async call(name: string, args: Record<string, unknown>, ctx: MetaToolContext): Promise<ToolResult> {
    try {
      const tool = this.#tools.get(name);
      if (!tool) throw new UnknownMetaToolError(name, this.names);
      checkFields(name, tool.definition.inputSchema, args);
      return await tool.run(readInput(tool.definition.inputSchema, args), ctx);
    } catch (error) {
      return errorResult(error, ctx.core.logger);
    }
  }
}

function listedSchema(schema: InputSchema): ToolDefinition["inputSchema"] {
  const properties = Object.fromEntries(
    Object.entries(schema.properties)
      .filter(([, property]) => !property.unlisted)
      .map(([name, { maxLength: _length, maxItems: _items, minimum: _min, maximum: _max, default: _default, unlisted: _unlisted, items, ...rest }]) => [
        name,
        items ? { ...rest, items: { type: items.type } } : rest,
      ]),
  );
  return { type: "object", properties, ...(schema.required ? { required: [...schema.required] } : {}) };
}
