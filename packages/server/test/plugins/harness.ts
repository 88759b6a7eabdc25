import { replayServerPath } from "@codemux/test-servers";
import { Codemux, createSessionServer, type CodemuxOptions } from "@codemux/server";
import type { Logger } from "@codemux/core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { pluginMiddleware, type Plugin, type PluginHostOptions, type PluginMiddleware } from "@codemux/hooks";
// The hooks package's own test helpers (a recording logger, a client that answers questions), shared rather than copied.
import { connectClient, recordingLogger, tempDir, type ClientOptions } from "../../../hooks/test/helpers";
import { config, node, referenceServer } from "../helpers";

// Plugins running inside codemux: the hooks package's integration tests, kept here so that hooks builds and tests without the server.
export { config, misbehaving, node, textOf } from "../helpers";
export { recordingLogger, tempDir } from "../../../hooks/test/helpers";
export const replay = (catalog: string) => node(replayServerPath, catalog);
export const filesystem = (root: string) => node(referenceServer("@modelcontextprotocol/server-filesystem"), root);

export interface Harness {
  core: Codemux;
  client: Client;
  plugins: PluginMiddleware;
  logger: Logger & { lines: string[] };
  dataDir: string;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** A codemux core with the plugins in its pipeline and a real SDK client on one session, over an in-memory pair. */
export async function connect(
  options: { servers: Record<string, unknown>; plugins: Plugin[]; host?: PluginHostOptions; core?: Partial<CodemuxOptions> } & ClientOptions,
): Promise<Harness> {
  const logger = recordingLogger();
  const dataDir = options.host?.dataDir ?? tempDir();
  const plugins = pluginMiddleware(options.plugins, { logger, dataDir, ...options.host });
  await plugins.ready();
  const core = new Codemux({
    config: config(options.servers),
    mode: "passthrough",
    poolOptions: { backoff: { initialMs: 50, maxMs: 200 } },
    middleware: [plugins],
    // The plugins alone: the scan's quarantine is tested with the pin plugin as its gate (scan.test.ts).
    scan: { mode: "off" },
    ...options.core,
  });
  core.start();
  await core.ready();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions).connect(serverSide);
  const client = connectClient(options);
  await client.connect(clientSide);
  return {
    core,
    client,
    plugins,
    logger,
    dataDir,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: async () => {
      await client.close();
      await core.close();
      await plugins.close();
    },
  };
}

/** A plugin that writes down what it saw, in order. */
export function tracer(name: string, priority: number, log: string[]): Plugin {
  return {
    name,
    priority,
    beforeCall: () => void log.push(`before:${name}`),
    afterCall: () => void log.push(`after:${name}`),
    onError: () => void log.push(`error:${name}`),
  };
}
