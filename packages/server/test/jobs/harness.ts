import type { SessionInfo } from "@codemux/core";
import { parseConfig, type PoolConfig } from "@codemux/pool";
import { Codemux, createSessionServer, type CodemuxOptions, type PolicyConfig } from "@codemux/server";
import { misbehavingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createJobs, type Jobs, type JobsOptions } from "@codemux/jobs";

export function config(servers: Record<string, unknown>): PoolConfig {
  return parseConfig(JSON.stringify({ mcpServers: servers }), { file: "test", env: process.env });
}

export const misbehaving = () => ({ command: process.execPath, args: [misbehavingServerPath] });

export async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "codemux-jobs-"));
}

export interface Harness {
  core: Codemux;
  jobs: Jobs;
  dataDir: string;
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  text(name: string, args?: Record<string, unknown>): Promise<string>;
  /** Another client on the same core, as another principal (a plain client unless one is given). */
  other(principal: string, client?: Client): Promise<Client>;
  close(): Promise<void>;
}

/** A codemux core with jobs, a misbehaving downstream server, and a real SDK client over an in-memory pair. */
export async function connect(
  options: {
    dataDir?: string;
    jobs?: Partial<JobsOptions>;
    client?: Client;
    policies?: PolicyConfig;
    session?: SessionInfo;
    /** The downstream servers; the misbehaving server as `bad` when absent. */
    servers?: Record<string, unknown>;
    /** The core's sandbox options (a short `hardTimeoutMs` makes the foreground limit short). */
    sandbox?: CodemuxOptions["sandbox"];
  } = {},
): Promise<Harness> {
  const dataDir = options.dataDir ?? (await tempDir());
  const jobs = createJobs({ dataDir, ...options.jobs });
  const core = new Codemux({
    config: config(options.servers ?? { bad: misbehaving() }),
    poolOptions: { backoff: { initialMs: 50, maxMs: 200 } },
    jobs: jobs.runner,
    metaTools: jobs.metaTools,
    middleware: [jobs.middleware],
    dataDir,
    ...(options.policies ? { policies: options.policies } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
  core.start();
  await jobs.recover();
  const clients: Client[] = [];
  const attach = async (client: Client, session?: SessionInfo) => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createSessionServer(core.sessions, session ? { session } : {}).connect(serverSide);
    await client.connect(clientSide);
    clients.push(client);
    return client;
  };
  const client = await attach(options.client ?? new Client({ name: "test", version: "1.0.0" }), options.session);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
  return {
    core,
    jobs,
    dataDir,
    client,
    call,
    text: async (name, args) => textOf(await call(name, args)),
    other: (principal, client) => attach(client ?? new Client({ name: "other", version: "1.0.0" }), core.session(principal)),
    close: async () => {
      for (const c of clients) await c.close();
      await jobs.close();
      await core.close();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

/** The job id in a "Started job ..." answer. */
export function jobId(text: string): string {
  const id = /job_[0-9a-f]{12}/.exec(text)?.[0];
  if (!id) throw new Error(`no job id in: ${text}`);
  return id;
}
