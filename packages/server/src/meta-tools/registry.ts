import type { MetaTool, RequestContext, SessionInfo, ToolDefinition, ToolResult } from "@codemux/core";
import { UnknownMetaToolError } from "../errors";
import { missingCapabilityUp, passedUp } from "../input-required";
import { errorResult } from "../render/text";
import type { CodemuxServices } from "../services";
import { checkFields, readInput } from "./input";
import type { InputSchema } from "@codemux/core";

/** Meta-tools by name: the one place a surface looks them up, reads their input and turns failures into error results. */
export class MetaToolRegistry {
  readonly #tools = new Map<string, MetaTool<Record<string, unknown>, CodemuxServices>>();
  readonly #services: CodemuxServices;

  /** `services` are given to every tool it runs, with the hints of the surface it serves. */
  constructor(services: CodemuxServices, tools: Iterable<MetaTool<never, CodemuxServices>> = []) {
    this.#services = services;
    for (const tool of tools) this.add(tool);
  }

  add<Input>(tool: MetaTool<Input, CodemuxServices>): void {
    this.#tools.set(tool.definition.name, tool as unknown as MetaTool<Record<string, unknown>, CodemuxServices>);
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
  async call(name: string, args: Record<string, unknown>, request: RequestContext): Promise<ToolResult> {
    const services = this.#services;
    try {
      const tool = this.#tools.get(name);
      if (!tool) throw new UnknownMetaToolError(name, this.names);
      checkFields(name, tool.definition.inputSchema, args);
      return await tool.run(readInput(tool.definition.inputSchema, args), { ...request, services });
    } catch (error) {
      // Only a direct call_tool is the client's own call: a snippet's or a job's call gets the error.
      if (name !== "call_tool") return errorResult(error, services);
      return passedUp(error, { tool: name, request, states: services.requestStates }) ?? missingCapabilityUp(error, request) ?? errorResult(error, services);
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
