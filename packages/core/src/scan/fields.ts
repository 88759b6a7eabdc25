import type { ScanInput } from "./types";

/**
 * Where a field is, as a chain of parts: a schema has thousands of strings and few findings, so the
 * path is written out only when a finding names it.
 */
export class FieldPath {
  private written: string | undefined;

  constructor(
    private readonly parent: FieldPath | undefined,
    /** A member's key, an array index, or (at the root) the item's own path. */
    private readonly part: string,
    private readonly kind: "root" | "member" | "index",
  ) {}

  member(key: string): FieldPath {
    return new FieldPath(this, key, "member");
  }

  index(i: number): FieldPath {
    return new FieldPath(this, String(i), "index");
  }

  toString(): string {
    if (this.written === undefined) {
      const own = this.kind === "root" ? this.part : this.kind === "index" ? `[${this.part}]` : member(this.part);
      this.written = `${this.parent?.toString() ?? ""}${own}`;
    }
    return this.written;
  }
}

/** One string of what a server sent, where it is, and what it belongs to. */
export interface Field {
  path: FieldPath;
  text: string;
  /** The text is the name of the member at `path`. */
  key: boolean;
  /** An identifier (a tool's or a property's name) rather than prose. */
  name: boolean;
  /** The tool's name when the field is a tool's `name`. */
  toolName?: string;
  /** The nearest property whose schema holds the field. */
  ownParam: string | undefined;
}

/** A part of the definitions not read, and why. */
export interface Skipped {
  path: FieldPath;
  reason: "depth" | "nodes";
}

/** Gets each field in turn; answers false to stop the walk (the scan's budget is spent). */
export type Visit = (field: Field | Skipped) => boolean;

/** The item a field belongs to: its verdict goes to one of the report's maps. */
export interface Item {
  kind: "tools" | "resources" | "prompts" | "instructions";
  /** The key in the report's map (the tool's name, the resource's URI, the prompt's name). */
  id: string;
  path: string;
  /** Lowercase names of the parameters text in this item may send data into. */
  params: ReadonlySet<string>;
  /** Visits the item's strings, depth first; stops at the depth and node bounds, visiting what it skipped. */
  fields(limits: { depth: number; nodes: number }, visit: Visit): void;
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

interface At {
  path: FieldPath;
  depth: number;
  ownParam: string | undefined;
  /** Under `properties` or `patternProperties`: keys are parameter names. */
  inProperties: boolean;
  budget: { nodes: number };
}

// Objects are built whole, not spread: a spread costs microseconds, and a schema has thousands of strings.
function walk(value: unknown, at: At, context: { depth: number; visit: Visit }): boolean {
  if (typeof value === "string") return context.visit({ path: at.path, text: value, key: false, name: false, ownParam: at.ownParam });
  if (value === null || typeof value !== "object") return true;
  if (at.depth >= context.depth) return context.visit({ path: at.path, reason: "depth" });
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (--at.budget.nodes < 0) return context.visit({ path: at.path, reason: "nodes" });
      const next = { path: at.path.index(i), depth: at.depth + 1, ownParam: at.ownParam, inProperties: false, budget: at.budget };
      if (!walk(value[i], next, context)) return false;
    }
    return true;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (--at.budget.nodes < 0) return context.visit({ path: at.path, reason: "nodes" });
    const path = at.path.member(key);
    const ownParam = at.inProperties ? key : at.ownParam;
    if (!context.visit({ path, text: key, key: true, name: at.inProperties, ownParam })) return false;
    const inProperties = key === "properties" || key === "patternProperties";
    if (!walk((value as Record<string, unknown>)[key], { path, depth: at.depth + 1, ownParam, inProperties, budget: at.budget }, context)) return false;
  }
  return true;
}

/** Visits the strings of some members of an item (`title`, `description`, `inputSchema`...), with one node budget. */
function strings(base: FieldPath, values: Record<string, unknown>, context: { limits: { depth: number; nodes: number }; visit: Visit }): boolean {
  const budget = { nodes: context.limits.nodes };
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) continue;
    const at = { path: base.member(key), depth: 0, ownParam: undefined, inProperties: false, budget };
    if (!walk(value, at, { depth: context.limits.depth, visit: context.visit })) return false;
  }
  return true;
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
      fields(limits, visit) {
        const root = new FieldPath(undefined, path, "root");
        if (
          typeof tool?.name === "string" &&
          !visit({ path: root.member("name"), text: tool.name, key: false, name: true, toolName: tool.name, ownParam: undefined })
        )
          return;
        const { title, description, annotations, inputSchema, outputSchema } = tool ?? {};
        strings(root, { title, description, annotations, inputSchema, outputSchema }, { limits, visit });
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
        fields(limits, visit) {
          const root = new FieldPath(undefined, path, "root");
          const { uri, uriTemplate, name, title, description, mimeType, arguments: args } = value ?? {};
          if (!strings(root, { uri, uriTemplate, name, title, description, mimeType }, { limits, visit }) || !Array.isArray(args)) return;
          for (const [i, arg] of args.entries()) {
            const argName = typeof arg?.name === "string" ? arg.name : undefined;
            const argPath = new FieldPath(root, `.arguments[${shown(argName ?? String(i), PLAIN_KEY)}]`, "root");
            if (argName !== undefined && !visit({ path: argPath.member("name"), text: argName, key: false, name: true, ownParam: undefined })) return;
            // An argument's description asking for something "here" means into that argument.
            const intoArgument: Visit = (field) => visit("reason" in field || argName === undefined ? field : { ...field, ownParam: argName });
            if (!strings(argPath, { title: arg?.title, description: arg?.description }, { limits, visit: intoArgument })) return;
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
      fields(_limits, visit) {
        visit({ path: new FieldPath(undefined, "instructions", "root"), text, key: false, name: false, ownParam: undefined });
      },
    });
  }
  return found;
}
