import type { ToolDefinition, ToolResult, SessionInfo } from "@codemux/core";
import type { Codemux } from "../core";
import type { MetaToolContext } from "../meta-tools/registry";

/**
 * What one mode shows a client: its tool list and how a call to one of its tools is answered.
 * A mode is a surface chosen by name (`--mode code`); a new mode is a new surface, registered on
 * the core, with nothing else to change.
 */
export interface Surface {
  readonly name: string;
  /** Server instructions sent at initialize. */
  instructions(): string | undefined;
  /** True when the tool list follows the catalog, so clients are told when it changes. */
  readonly listChanges: boolean;
  /** The tools one session's client sees (some are listed only to clients with a capability); a session-less caller sees the plain list. */
  listTools(session?: SessionInfo): Promise<ToolDefinition[]>;
  callTool(name: string, args: Record<string, unknown>, ctx: MetaToolContext): Promise<ToolResult>;
}

/** Makes a mode's surface over a core. */
export type SurfaceFactory = (core: Codemux) => Surface;
