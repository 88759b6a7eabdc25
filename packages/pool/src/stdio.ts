/**
 * Node-only parts of @codemux/pool: the child-process transport, the environment stdio servers
 * get, and the process-group registry. Not an entry users import: a chunk of its own (tsup's second
 * entry) that the root entry loads on its first stdio server, so the root loads no child_process.
 */
import type { StdioTransportSpec, TransportContext } from "./config/types";
import { ChildProcessTransport } from "./stdio-transport";

export { loadConfigFile } from "./config/load";
export { childEnvironment, inheritedVariableNames } from "./environment";
export { killAllGroupsNow } from "./process-groups";
export { ChildProcessTransport } from "./stdio-transport";
export type { ChildProcessTransportOptions, ExitInfo } from "./stdio-transport";

/** The default stdio transport of the pool. */
export function createStdioTransport(spec: StdioTransportSpec, context: TransportContext): ChildProcessTransport {
  return new ChildProcessTransport(spec, {
    stderr: context.stderr,
    onNoise: (line) => context.logger.debug(`[${context.server}] ignored non-JSON stdout: ${line.slice(0, 200)}`),
    ...(context.env ? { parentEnv: context.env } : {}),
  });
}
