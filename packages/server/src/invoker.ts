import type { Catalog, CatalogEntry } from "@codemux/catalog";
import type { CallOptions, ServerPool } from "@codemux/pool";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ArgumentValidator } from "./validation";

export interface InvokeOptions extends CallOptions {}

/**
 * The one path every downstream call takes, from call_tool and from execute_code alike:
 * resolve the name in the catalog, validate the arguments, call through the pool (timeouts,
 * cancellation, progress, reconnects).
 */
export class ToolInvoker {
  readonly #validator = new ArgumentValidator();

  constructor(readonly pool: ServerPool, readonly catalog: Catalog) {}

  resolve(name: string): CatalogEntry {
    return this.catalog.resolve(name);
  }

  async call(name: string, args: unknown, options: InvokeOptions = {}): Promise<CallToolResult> {
    const entry = this.catalog.resolve(name);
    const input = args ?? {};
    this.#validator.validate(entry.qualifiedName, entry.tool.inputSchema, input);
    return this.pool.callTool(entry.server, entry.name, input as Record<string, unknown>, options);
  }
}
