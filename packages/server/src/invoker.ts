import { SEPARATOR, UnknownToolError, type Catalog, type CatalogEntry } from "@codemux/catalog";
import { ServerUnavailableError, type CallOptions, type ServerPool } from "@codemux/pool";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { BadRequestError } from "./errors";
import { ArgumentValidator } from "./validation";

/** Longer than any `server__tool` name; a longer one is refused before the catalog spends time suggesting names for it. */
const MAX_TOOL_NAME_CHARS = 512;

export interface InvokeOptions extends CallOptions {}

/**
 * The one path every downstream call takes, from call_tool and from execute_code alike:
 * resolve the name in the catalog, validate the arguments, call through the pool (timeouts,
 * cancellation, progress, reconnects).
 */
export class ToolInvoker {
  readonly #validator = new ArgumentValidator();

  constructor(readonly pool: ServerPool, readonly catalog: Catalog) {}

  /** The catalog entry of `server__tool`; for a server that is down and has no tools listed, why it is down. */
  resolve(name: string): CatalogEntry {
    if (name.length > MAX_TOOL_NAME_CHARS) {
      throw new BadRequestError(`No tool has a name of ${name.length} characters; names look like "server__tool" and search_tools finds them.`);
    }
    try {
      return this.catalog.resolve(name);
    } catch (error) {
      const server = name.slice(0, Math.max(0, name.indexOf(SEPARATOR)));
      const status = this.pool.status().find((s) => s.name === server);
      if (error instanceof UnknownToolError && status && status.state !== "ready") {
        throw new ServerUnavailableError(server, status.error ?? `it is ${status.state}`, { cause: error });
      }
      throw error;
    }
  }

  async call(name: string, args: unknown, options: InvokeOptions = {}): Promise<CallToolResult> {
    const entry = this.resolve(name);
    const input = args ?? {};
    this.#validator.validate(entry.qualifiedName, entry.tool.inputSchema, input);
    return this.pool.callTool(entry.server, entry.name, input as Record<string, unknown>, options);
  }
}
