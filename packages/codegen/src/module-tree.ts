import {
  BRIDGE_SPECIFIER,
  SCHEMA_MODULE_SUFFIX,
  SERVER_MODULE_NAMES,
  SERVER_NAME_PATTERN,
  SERVERS_PREFIX,
  isReservedWord,
  serverModuleSpecifier,
  toolModuleSpecifier,
} from "@codemux/core";
import { renderBridgeModule } from "./bridge-module";
import type { CodegenTool } from "./codegen-tool";
import { InvalidFunctionNameError, InvalidServerNameError } from "./errors";
import { isIdentifier } from "./names";
import { renderSchemaModule } from "./schema-module";
import { renderServerIndexModule } from "./server-index-module";
import { renderToolModule, toolTypeNames } from "./tool-module";

export interface ModuleTreeOptions {
  /** The global function the sandbox gives snippets for tool calls (the sandbox's `HOST_CALL_GLOBAL`). */
  hostCallGlobal: string;
}

interface ServerModules {
  tools: readonly CodegenTool[];
  index: string;
  modules: Map<string, string>;
  /** By function name, for the `.schema` modules, made when imported (most never are). */
  byFunction: Map<string, CodegenTool>;
}

/** The wrapper modules of every server, in memory and keyed by specifier, regenerated per server. */
export class ModuleTree {
  private readonly servers = new Map<string, ServerModules>();
  readonly #bridge: string;

  constructor(options: ModuleTreeOptions) {
    this.#bridge = renderBridgeModule(options.hostCallGlobal);
  }

  /** Generates one server's modules, replacing any it had. Throws before changing anything if a name is unusable. */
  setServer(server: string, tools: readonly CodegenTool[]): void {
    if (!SERVER_NAME_PATTERN.test(server)) throw new InvalidServerNameError(server);
    checkFunctionNames(server, tools);
    const modules = new Map(tools.map((tool) => [tool.functionName, renderToolModule(tool)]));
    const byFunction = new Map(tools.map((tool) => [tool.functionName, tool]));
    this.servers.set(server, { tools: [...tools], index: renderServerIndexModule(server, tools), modules, byFunction });
  }

  removeServer(server: string): void {
    this.servers.delete(server);
  }

  /** Server names, sorted. */
  serverNames(): string[] {
    return [...this.servers.keys()].sort();
  }

  /** The tools a server's modules were generated from. */
  tools(server: string): readonly CodegenTool[] | undefined {
    return this.servers.get(server)?.tools;
  }

  /**
   * The TypeScript source of one module: `mcp/bridge`, `mcp/servers/<server>` (also `.../index`),
   * `mcp/servers/<server>/<function>` or its JSON Schemas, `.../<function>.schema`. A trailing `.ts` or `/` is ignored.
   */
  get(specifier: string, visible?: ToolVisibility): string | undefined {
    const normalized = specifier.replace(/\/+$/, "").replace(/\.ts$/, "");
    if (normalized === BRIDGE_SPECIFIER) return this.#bridge;
    if (!normalized.startsWith(SERVERS_PREFIX)) return undefined;
    const [server = "", name, ...rest] = normalized.slice(SERVERS_PREFIX.length).split("/");
    const modules = this.servers.get(server);
    if (modules === undefined || rest.length > 0) return undefined;
    if (name === undefined || name === "index") return visible === undefined ? modules.index : visibleIndex(server, modules, visible);
    const fn = name.endsWith(SCHEMA_MODULE_SUFFIX) ? name.slice(0, -SCHEMA_MODULE_SUFFIX.length) : name;
    const tool = modules.byFunction.get(fn);
    if (tool === undefined || (visible !== undefined && !visible(tool.qualifiedName))) return undefined;
    return fn === name ? modules.modules.get(name) : renderSchemaModule(tool);
  }

  /** Module specifiers equal to `prefix` or under it (by whole path segments), sorted; all of them without one, and only the tools `visible` shows with it. */
  list(prefix = "", visible?: ToolVisibility): string[] {
    const base = prefix.replace(/\/+$/, "");
    const all = [BRIDGE_SPECIFIER];
    for (const [server, modules] of this.servers) {
      const shown = modules.tools.filter((tool) => visible === undefined || visible(tool.qualifiedName));
      if (visible !== undefined && shown.length === 0) continue;
      all.push(serverModuleSpecifier(server));
      for (const tool of shown) all.push(toolModuleSpecifier(server, tool.functionName));
    }
    return all.filter((specifier) => base === "" || specifier === base || specifier.startsWith(`${base}/`)).sort();
  }
}

/** Whether a tool (by `server__tool`) exists for whoever asks: a principal's policy may hide some. */
export type ToolVisibility = (qualifiedName: string) => boolean;

/** A server's index module with only the tools `visible` shows (the whole one, made once, when it shows all). */
function visibleIndex(server: string, modules: ServerModules, visible: ToolVisibility): string | undefined {
  const shown = modules.tools.filter((tool) => visible(tool.qualifiedName));
  if (shown.length === 0) return undefined;
  return shown.length === modules.tools.length ? modules.index : renderServerIndexModule(server, shown);
}

function checkFunctionNames(server: string, tools: readonly CodegenTool[]): void {
  const seen = new Set<string>();
  const typeNames = new Set<string>();
  for (const { functionName } of tools) {
    if (!isIdentifier(functionName)) throw new InvalidFunctionNameError(server, functionName, "is not a JavaScript identifier");
    if (isReservedWord(functionName)) throw new InvalidFunctionNameError(server, functionName, "is a reserved word");
    if (SERVER_MODULE_NAMES.has(functionName.toLowerCase())) {
      throw new InvalidFunctionNameError(server, functionName, `would collide with the server's ${functionName.toLowerCase()} module`);
    }
    if (seen.has(functionName)) throw new InvalidFunctionNameError(server, functionName, "is used by two tools");
    const { input } = toolTypeNames(functionName);
    if (typeNames.has(input))
      throw new InvalidFunctionNameError(server, functionName, `gives the type name ${input} that another tool's function already gives`);
    seen.add(functionName);
    typeNames.add(input);
  }
}
