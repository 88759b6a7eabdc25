import type { ScanInput } from "./types";

/** One string of what a server sent, where it is, and what it belongs to. */
export interface Field {
  path: string;
  text: string;
  /** The text is the name of the member at `path`. */
  key: boolean;
  /** An identifier (a tool's or a property's name) rather than prose. */
  name: boolean;
  /** The tool's name when the field is a tool's `name`. */
  toolName?: string;
  /** The nearest property whose schema holds the field. */
  ownParam?: string;
}

/** A part of the definitions not read, and why. */
export interface Skipped {
  path: string;
  reason: "depth" | "nodes";
}

/** The item a field belongs to: its verdict goes to one of the report's maps. */
export interface Item {
  kind: "tools" | "resources" | "prompts" | "instructions";
  /** The key in the report's map (the tool's name, the resource's URI, the prompt's name). */
  id: string;
  path: string;
  /** Lowercase names of the parameters text in this item may send data into. */
  params: ReadonlySet<string>;
  /** The item's strings, depth first; stops at the depth and node bounds, reporting what it skipped. */
  fields(limits: { depth: number; nodes: number }): Iterable<Field | Skipped>;
}

const PLAIN_KEY = /^[A-Za-z_$][\w$-]{0,63}$/;
const PLAIN_ID = /^[\w$.:/@+~=-]{1,96}$/;
const UNSEEN = /[\0-\x1F\x7F-\x9F\p{Cf}\p{Cs}\p{Z}\uFE00-\uFE0F\u{E0100}-\u{E01EF}"\\[\]]/gu;

/** A name as a path shows it: plain when it is, else quoted with every hidden character, quote and bracket escaped, cut at 64. */
function shown(name: string, plain: RegExp): string {
  if (plain.test(name)) return name;
  const cut = name.length > 64 ? `${name.slice(0, 64)}…` : name;
  return `"${cut.replace(UNSEEN, (c) => (c === " " ? " " : `\\u{${c.codePointAt(0)!.toString(16).toUpperCase()}}`))}"`;
}

/** `.key`, or `["odd key"]`. */
export const member = (key: string) => (PLAIN_KEY.test(key) ? `.${key}` : `[${shown(key, PLAIN_KEY)}]`);
/** `tools[send]`, `resources[file:///notes]`, `tools["we]ird"]`. */
export const entry = (list: string, id: string) => `${list}[${shown(id, PLAIN_ID)}]`;

function* walk(
  value: unknown,
  at: { path: string; depth: number; ownParam?: string; budget: { nodes: number } },
  limits: { depth: number },
): Generator<Field | Skipped> {
  if (typeof value === "string") {
    yield { path: at.path, text: value, key: false, name: false, ...(at.ownParam !== undefined ? { ownParam: at.ownParam } : {}) };
    return;
  }
  if (value === null || typeof value !== "object") return;
  if (at.depth >= limits.depth) {
    yield { path: at.path, reason: "depth" };
    return;
  }
  const inProperties = /\.(?:properties|patternProperties)$/.test(at.path);
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, child] of entries) {
    if (--at.budget.nodes < 0) {
      yield { path: at.path, reason: "nodes" };
      return;
    }
    const path = Array.isArray(value) ? `${at.path}[${key}]` : `${at.path}${member(key)}`;
    const ownParam = inProperties ? key : at.ownParam;
    if (!Array.isArray(value)) yield { path, text: key, key: true, name: inProperties, ...(ownParam !== undefined ? { ownParam } : {}) };
    yield* walk(child, { path, depth: at.depth + 1, budget: at.budget, ...(ownParam !== undefined ? { ownParam } : {}) }, limits);
  }
}

function* strings(base: string, values: Record<string, unknown>, limits: { depth: number; nodes: number }): Generator<Field | Skipped> {
  const budget = { nodes: limits.nodes };
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) continue;
    yield* walk(value, { path: `${base}${member(key)}`, depth: 0, budget }, limits);
  }
}

const lower = (names: Iterable<string>) => new Set([...names].map((n) => n.toLowerCase()));

/** Every item of the input, tools first, then resources, prompts and the instructions. */
export function items(input: ScanInput): Item[] {
  const found: Item[] = [];
  const allParams = new Set<string>();
  for (const [index, tool] of (input.tools ?? []).entries()) {
    const id = typeof tool?.name === "string" ? tool.name : `#${index}`;
    const path = entry("tools", typeof tool?.name === "string" ? tool.name : String(index));
    const properties = tool?.inputSchema?.properties;
    const params = lower(properties && typeof properties === "object" ? Object.keys(properties).slice(0, 1000) : []);
    for (const p of params) allParams.add(p);
    found.push({
      kind: "tools",
      id,
      path,
      params,
      *fields(limits) {
        if (typeof tool?.name === "string") yield { path: `${path}.name`, text: tool.name, key: false, name: true, toolName: tool.name };
        const { title, description, annotations, inputSchema, outputSchema } = tool ?? {};
        yield* strings(path, { title, description, annotations, inputSchema, outputSchema }, limits);
      },
    });
  }
  const listed = (list: "resources" | "prompts", values: readonly Record<string, unknown>[] | undefined, idOf: (v: Record<string, unknown>) => unknown) => {
    for (const [index, value] of (values ?? []).entries()) {
      const raw = value && typeof value === "object" ? idOf(value) : undefined;
      const id = typeof raw === "string" ? raw : `#${index}`;
      const path = entry(list, typeof raw === "string" ? raw : String(index));
      found.push({
        kind: list,
        id,
        path,
        params: allParams,
        *fields(limits) {
          const { uri, uriTemplate, name, title, description, mimeType, arguments: args } = value ?? {};
          yield* strings(path, { uri, uriTemplate, name, title, description, mimeType }, limits);
          if (!Array.isArray(args)) return;
          for (const [i, arg] of args.entries()) {
            const argName = typeof arg?.name === "string" ? arg.name : String(i);
            const argPath = `${path}.arguments[${shown(argName, PLAIN_KEY)}]`;
            if (typeof arg?.name === "string") yield { path: `${argPath}.name`, text: arg.name, key: false, name: true };
            for (const field of strings(argPath, { title: arg?.title, description: arg?.description }, limits)) {
              yield "reason" in field || typeof arg?.name !== "string" ? field : { ...field, ownParam: arg.name };
            }
          }
        },
      });
    }
  };
  listed("resources", input.resources, (r) => r.uri ?? r.name);
  listed("resources", input.resourceTemplates, (r) => r.uriTemplate ?? r.name);
  listed("prompts", input.prompts, (p) => p.name);
  if (typeof input.instructions === "string") {
    const text = input.instructions;
    found.push({
      kind: "instructions",
      id: "instructions",
      path: "instructions",
      params: allParams,
      *fields() {
        yield { path: "instructions", text, key: false, name: false };
      },
    });
  }
  return found;
}
