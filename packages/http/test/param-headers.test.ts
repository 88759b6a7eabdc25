import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createJobs } from "@codemux/jobs";
import { Codemux } from "@codemux/server";
import { paramHeaderServerPath, startOverHttp } from "@codemux/test-servers";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodemuxHttpServer } from "../src/index";
import { MCP_HEADERS, TOKENS, bearer, config, lastAnswerOf, restAs, textOf } from "./helpers";

const MODERN = "2026-07-28";
const ROUTE = { region: "Zürich", priority: 7, query: "q" };
const ROUTED = "routed q to Zürich at 7";

let dir: string;
let log: string;
let downstream: ChildProcess;
let core: Codemux;
let jobs: ReturnType<typeof createJobs>;
let code: CodemuxHttpServer;
let passthrough: CodemuxHttpServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-param-headers-"));
  log = join(dir, "headers.log");
  const started = await startOverHttp(paramHeaderServerPath, ["--log", log]);
  downstream = started.child;
  jobs = createJobs({ dataDir: dir });
  core = new Codemux({ config: config({ p: { type: "http", url: `${started.url}/mcp` } }), dataDir: dir, jobs: jobs.runner, metaTools: jobs.metaTools });
  core.start();
  await core.ready();
  const tokens = [{ name: "alice", token: TOKENS.alice }];
  code = new CodemuxHttpServer(core, { port: 0, tokens, log: () => undefined });
  passthrough = new CodemuxHttpServer(core, { port: 0, tokens, mode: "passthrough", log: () => undefined });
  await Promise.all([code.listen(), passthrough.listen()]);
});

afterAll(async () => {
  await Promise.all([code.close(), passthrough.close()]);
  await jobs.close();
  await core.close();
  downstream.kill();
  await rm(dir, { recursive: true, force: true });
});

/** The Mcp-Param headers the downstream received with each call so far. */
async function sentHeaders(): Promise<Array<Record<string, string>>> {
  return (await readFile(log, "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, string>);
}

async function modernClient(url: string): Promise<ModernClient> {
  const client = new ModernClient({ name: "modern", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new ModernTransport(new URL(`${url}/mcp`), { requestInit: { headers: bearer(TOKENS.alice) } }));
  return client;
}

/** One 2026-07-28 `tools/call` of `p__route` to the passthrough server, with the routing headers and `extra` ones. */
async function rawCall(args: Record<string, unknown>, extra: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  const response = await fetch(`${passthrough.url}/mcp`, {
    method: "POST",
    headers: { ...MCP_HEADERS, ...bearer(TOKENS.alice), "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "p__route", ...extra },
    body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "p__route", arguments: args, _meta } }),
  });
  return { status: response.status, body: lastAnswerOf(await response.text()) };
}

describe("Mcp-Param headers (SEP-2243) on every path to a downstream 2026 server whose tool marks parameters with x-mcp-header", () => {
  it("passthrough (2026 and 2025 clients), call_tool, a snippet, a background job and REST all reach its SDK v2 McpServer, which checks them", async () => {
    const before = (await sentHeaders().catch(() => [])).length;
    const modern = await modernClient(passthrough.url);
    const listed = (await modern.listTools()).tools.find((t) => t.name === "p__route");
    // The client sees the annotations (and mirrors them to codemux, which checks them), as the downstream declared them.
    expect(JSON.stringify(listed?.inputSchema)).toContain('"x-mcp-header":"Region"');
    expect(textOf(await modern.callTool({ name: "p__route", arguments: ROUTE }))).toBe(ROUTED);
    await modern.close();

    const legacy = new Client({ name: "legacy", version: "1.0.0" });
    await legacy.connect(new StreamableHTTPClientTransport(new URL(`${passthrough.url}/mcp`), { requestInit: { headers: bearer(TOKENS.alice) } }));
    expect(textOf(await legacy.callTool({ name: "p__route", arguments: ROUTE }))).toBe(ROUTED);
    await legacy.close();

    const coded = await modernClient(code.url);
    expect(textOf(await coded.callTool({ name: "call_tool", arguments: { name: "p__route", args: ROUTE } }))).toContain(ROUTED);
    const snippet = `import { route } from "mcp/servers/p";\nexport default await route(${JSON.stringify(ROUTE)});`;
    expect(textOf(await coded.callTool({ name: "execute_code", arguments: { code: snippet } }))).toContain(ROUTED);
    const started = textOf(await coded.callTool({ name: "execute_code", arguments: { code: snippet, background: true } }));
    const id = /job_[0-9a-f]{12}/.exec(started)?.[0];
    const output = await coded.callTool({ name: "jobs", arguments: { action: "output", ids: [id], wait_up_to: 20 } });
    expect(textOf(output)).toContain(ROUTED);
    await coded.close();

    const rest = await restAs(code.url)(TOKENS.alice, "/v1/tools/p__route/call", ROUTE);
    expect(rest).toEqual({ status: 200, body: { tool: "p__route", value: ROUTED } });

    const encoded = `=?base64?${Buffer.from("Zürich").toString("base64")}?=`;
    expect((await sentHeaders()).slice(before)).toEqual(Array(6).fill({ "mcp-param-region": encoded, "mcp-param-priority": "7" }));
  });

  it("refuses a 2026 call to a passthrough tool whose Mcp-Param header is missing, malformed or disagrees with the body (400, -32020); the right one goes down", async () => {
    const before = (await sentHeaders().catch(() => [])).length;
    const refusal = (message: RegExp) => ({ status: 400, body: { jsonrpc: "2.0", id: 9, error: { code: -32020, message: expect.stringMatching(message) } } });
    expect(await rawCall({ region: "eu", query: "q" }, {})).toEqual(refusal(/region="eu" but the Mcp-Param-Region header is absent/));
    expect(await rawCall({ region: "eu", query: "q" }, { "mcp-param-region": "us" })).toEqual(refusal(/Mcp-Param-Region header says "us"/));
    expect(await rawCall({ region: "eu", priority: 3, query: "q" }, { "mcp-param-region": "eu", "mcp-param-priority": "4" })).toEqual(
      refusal(/Mcp-Param-Priority header says "4"/),
    );
    expect(await rawCall({ region: "eu", query: "q" }, { "mcp-param-region": "=?base64?not base64?=" })).toEqual(refusal(/is malformed/));
    // "Hello" is SGVsbG8= in base64: without its padding the value is malformed.
    expect(await rawCall({ region: "Hello", query: "q" }, { "mcp-param-region": "=?base64?SGVsbG8?=" })).toEqual(refusal(/is malformed/));
    // Nothing refused went down.
    expect((await sentHeaders()).length).toBe(before);

    const accepted = await rawCall({ region: "eu", priority: 3, query: "q" }, { "mcp-param-region": "eu", "mcp-param-priority": "3.0" });
    expect(accepted.status).toBe(200);
    expect(textOf(accepted.body.result)).toBe("routed q to eu at 3");
    // An absent parameter needs no header; a value without both sentinel ends is a literal, whatever it looks like.
    expect((await rawCall({ region: "eu", query: "q" }, { "mcp-param-region": "eu" })).status).toBe(200);
    expect((await rawCall({ region: "=?base64?SGVsbG8=", query: "q" }, { "mcp-param-region": "=?base64?SGVsbG8=" })).status).toBe(200);
    expect((await sentHeaders()).slice(before).slice(0, 2)).toEqual([{ "mcp-param-region": "eu", "mcp-param-priority": "3" }, { "mcp-param-region": "eu" }]);
  });
});
