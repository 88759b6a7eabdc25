import { misbehavingServerPath } from "@codemux/test-servers";
import { parseConfig, type PoolConfig } from "@codemux/pool";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Codemux, createSessionServer, type CodemuxOptions, type CodemuxServices } from "../src/index";
import { CODE_HINTS } from "../src/render/hints";

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

export interface Harness {
  core: Codemux;
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  text(name: string, args?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

/** A Codemux core with a real SDK client connected to one session, over an in-memory transport pair. */
export async function connect(options: CodemuxOptions): Promise<Harness> {
  const core = new Codemux({ poolOptions: { backoff: { initialMs: 50, maxMs: 200 } }, ...options });
  core.start();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions).connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  return {
    core,
    client,
    call,
    text: async (name, args) => textOf(await call(name, args)),
    close: async () => {
      await client.close();
      await core.close();
    },
  };
}

export function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

/** The services a core's surfaces and meta-tools are given (its `servicesFor`, as mode code's hints name them). */
export function servicesOf(core: Codemux): CodemuxServices {
  return core.servicesFor(CODE_HINTS);
}
