import type { Logger } from "@codemux/core";
import { parseConfig, type PoolConfig } from "@codemux/pool";
import { Codemux, createSessionServer, type CodemuxOptions } from "@codemux/server";
import { misbehavingServerPath, replayServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type CallToolResult,
  type ClientCapabilities,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequest,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pluginMiddleware, type Plugin, type PluginHostOptions, type PluginMiddleware } from "../src/index";

const require = createRequire(import.meta.url);

/** The entry script of a reference server installed from npm. */
export function referenceServer(pkg: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = require(manifest) as { bin: Record<string, string> };
  return join(dirname(manifest), Object.values(bin)[0]!);
}

export function config(servers: Record<string, unknown>): PoolConfig {
  return parseConfig(JSON.stringify({ mcpServers: servers }), { file: "test", env: process.env });
}

export const node = (script: string, ...args: string[]) => ({ command: process.execPath, args: [script, ...args] });
export const misbehaving = (...args: string[]) => node(misbehavingServerPath, ...args);
export const replay = (catalog: string) => node(replayServerPath, catalog);
export const filesystem = (root: string) => node(referenceServer("@modelcontextprotocol/server-filesystem"), root);

export function tempDir(prefix = "hooks-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A logger that keeps what it is told, to check that a failing plugin is named. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  return { lines, debug: keep("debug"), info: keep("info"), warn: keep("warn"), error: keep("error") };
}

export interface ClientOptions {
  /** Answers the server's elicitation requests; the client declares elicitation when given. */
  elicit?: (request: ElicitRequest["params"]) => ElicitResult | Promise<ElicitResult>;
  /** Answers sampling requests; the client declares sampling when given. */
  sample?: (request: CreateMessageRequest["params"]) => CreateMessageResult | Promise<CreateMessageResult>;
}

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
  await createSessionServer(core).connect(serverSide);
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

/** An SDK client that declares (and answers) elicitation and sampling when asked to. */
export function connectClient(options: ClientOptions): Client {
  const capabilities: ClientCapabilities = {
    ...(options.elicit ? { elicitation: {} } : {}),
    ...(options.sample ? { sampling: {} } : {}),
  };
  const client = new Client({ name: "test", version: "1.0.0" }, { capabilities });
  if (options.elicit) {
    const elicit = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (request) => elicit(request.params));
  }
  if (options.sample) {
    const sample = options.sample;
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => sample(request.params));
  }
  return client;
}

export function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
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
