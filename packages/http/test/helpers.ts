import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { request } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { parseConfig, type PoolConfig } from "@codemux/pool";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { Codemux, type CodemuxOptions } from "@codemux/server";
import { misbehavingServerPath } from "@codemux/test-servers";
import { CodemuxHttpServer, httpCallRecorders, type HttpServeOptions, type LogRecord } from "../src/index";

export const TOKENS = { alice: "alice-token-0123456789", bob: "bob-token-9876543210" };

export function config(servers: Record<string, unknown>): PoolConfig {
  return parseConfig(JSON.stringify({ mcpServers: servers }), { file: "test", env: process.env });
}

export const misbehaving = (...args: string[]) => ({ command: process.execPath, args: [misbehavingServerPath, ...args] });

const require = createRequire(import.meta.url);

/** The entry script of a reference server installed from npm, run with this Node. */
export function referenceServer(pkg: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = require(manifest) as { bin: Record<string, string> };
  return join(dirname(manifest), Object.values(bin)[0] as string);
}

export interface Served {
  core: Codemux;
  http: CodemuxHttpServer;
  url: string;
  logs: LogRecord[];
  close(): Promise<void>;
}

/** A core with the misbehaving server as "m" (and `core`'s options), served over HTTP on a free loopback port. */
export async function serve(
  options: HttpServeOptions = {},
  servers: Record<string, unknown> = { m: misbehaving() },
  coreOptions: Partial<CodemuxOptions> = {},
): Promise<Served> {
  // The server's call recorders are composed into the core's pipeline, as the CLI does.
  const recorders = httpCallRecorders(coreOptions.mask ? { mask: coreOptions.mask } : {});
  const core = new Codemux({
    config: config(servers),
    poolOptions: { backoff: { initialMs: 50, maxMs: 200 } },
    ...coreOptions,
    middleware: [...(coreOptions.middleware ?? []), ...recorders.middleware],
  });
  core.start();
  await core.ready();
  const logs: LogRecord[] = [];
  const http = new CodemuxHttpServer(core, {
    port: 0,
    tokens: [
      { name: "alice", token: TOKENS.alice },
      { name: "bob", token: TOKENS.bob },
    ],
    log: (record) => logs.push(record),
    recorders,
    ...options,
  });
  await http.listen();
  return {
    core,
    http,
    url: http.url,
    logs,
    close: async () => {
      await http.close();
      await core.close();
    },
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** An SDK v2 client of `token`'s principal speaking 2026-07-28 that may be asked (elicitation); with `answer`, it answers and retries by itself. */
export async function askableClient(url: string, token: string, answer?: string): Promise<ModernClient> {
  const client = new ModernClient(
    { name: "modern", version: "1.0.0" },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: "auto" }, inputRequired: { autoFulfill: answer !== undefined } },
  );
  if (answer !== undefined) client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { answer } }));
  await client.connect(new ModernTransport(new URL(`${url}/mcp`), { requestInit: { headers: bearer(token) } }));
  return client;
}

/** The JSON-RPC answer in a POST's response body: the body itself, or on an SSE stream its last data line. */
export function lastAnswerOf(text: string): Record<string, unknown> {
  const events = text.split("\n").filter((line) => line.startsWith("data: "));
  return JSON.parse(events.length > 0 ? (events.at(-1)?.slice(6) ?? "{}") : text) as Record<string, unknown>;
}

/** The text parts of a tool result, joined as a client shows them. */
export const textOf = (result: unknown) => ((result as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

/** REST requests to the gateway at `url` as `token`'s principal (GET, or POST with `body` as JSON): the status and the parsed body. */
export function restAs(url: string) {
  return async (token: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${url}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
}

export async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** The headers of an MCP POST over Streamable HTTP, and a 2025 client's initialize request. */
export const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
export const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});

/** One request through node:http, where every header (Host included) is ours to set; `localAddress` picks the loopback address it comes from. */
export function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; localAddress?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const { localAddress } = options;
    const req = request(
      url,
      { method: options.method ?? "GET", headers: options.headers ?? {}, agent: false, ...(localAddress ? { localAddress } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}
